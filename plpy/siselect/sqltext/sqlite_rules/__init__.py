"""Rewrites of a parsed SQLite query that make PostgreSQL return what SQLite returns.

One module per rule, named after the function it exports; each rule takes the tree and
the :class:`~siselect.runtime.catalog.Catalog` (or None) and returns the rewritten tree. The order
in which they run is in :mod:`siselect.sqltext.transpile`. ``template`` and ``sqlite_type`` are
helpers the rules share.
"""
