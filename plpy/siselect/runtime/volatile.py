"""PostgreSQL's built-in functions whose value changes from one call to the next.

An expression that calls one cannot be evaluated twice in place of once (a group key
recomputed row by row, a subquery's copies computed as one) without changing its value."""

VOLATILE_FUNCTIONS = frozenset({
    "random", "random_normal", "setseed", "nextval", "currval", "lastval", "clock_timestamp",
    "timeofday", "statement_timestamp", "txid_current", "gen_random_uuid", "pg_sleep",
    "uuid_generate_v1", "uuid_generate_v4",
})
