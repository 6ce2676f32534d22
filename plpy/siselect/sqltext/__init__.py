"""sqltext"""
