"""The mark the loader writes into a schema's comment: a schema siselect loaded (and so
may replace, and grants the runner role access to) is one that carries it."""

MARK = "siselect-load"
