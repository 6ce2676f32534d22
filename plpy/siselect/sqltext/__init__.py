"""Stage 1 of the pipeline: candidate text in, a checked PostgreSQL query tree out.

``check`` accepts one read-only SELECT; ``transpile`` applies the ``sqlite_rules`` so that
a SQLite query means the same on PostgreSQL; ``nondeterminism`` flags answers that depend
on how ties are broken.
"""
