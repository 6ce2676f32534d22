"""client/bench"""
