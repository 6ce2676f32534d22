"""PostgreSQL as NL2SQL models write it, each query with a mutated twin (a plausible mistake).

One template is a question's SQL over a profile's columns (``{t}`` its table, ``{k}`` key,
``{n}`` measure, ``{c}`` grouping column, ``{x}`` text, ``{d}`` date text; ``{p}``, ``{pk}``,
``{pl}``, ``{fk}`` the parent) and literals read from the data (``{N}`` the measure's median,
``{cv}`` the commonest group, ``{pat}`` a lower-case piece of a common text, ``{Y}`` the
commonest year, ``{Y1}``..``{Y2}`` the years, ``{lo}``, ``{step}`` a histogram's buckets).
The twin is the same question answered with one typical slip: an off-by-one comparison,
integer instead of exact division, LIKE for ILIKE, the wrong date part, a lost NULLS LAST,
COUNT(*) where COUNT(col) counts the empty buckets, the average of averages.
Every query orders by a unique key where a LIMIT or DISTINCT ON picks rows, so that no
answer hangs on how ties are broken.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Template:
    construct: str
    needs: frozenset[str]
    query: str
    twin: str


def _t(construct: str, needs: str, query: str, twin: str) -> Template:
    return Template(construct, frozenset(needs.split()), " ".join(query.split()),
                    " ".join(twin.split()))


CAST, FILTER, ILIKE, NULLIF, EXTRACT, DATE_TRUNC, STRING_AGG, DISTINCT_ON, WINDOW, LATERAL, \
    SERIES, MATERIALIZED, DIVISION = (
        "cast ::", "FILTER (WHERE)", "ILIKE", "NULLIF", "EXTRACT", "DATE_TRUNC", "STRING_AGG",
        "DISTINCT ON", "window function", "LATERAL", "generate_series", "CTE MATERIALIZED",
        "numeric vs float division")
CONSTRUCTS = (CAST, FILTER, ILIKE, NULLIF, EXTRACT, DATE_TRUNC, STRING_AGG, DISTINCT_ON, WINDOW,
              LATERAL, SERIES, MATERIALIZED, DIVISION)

TEMPLATES = [
    # -- casts
    _t(CAST, "num", "SELECT {k}, {n}::numeric(12,2) AS v FROM {t} WHERE {n}::numeric > {N}",
       "SELECT {k}, {n}::numeric(12,2) AS v FROM {t} WHERE {n}::numeric >= {N}"),
    _t(CAST, "", "SELECT {c}::text AS grp, COUNT(*)::int AS n FROM {t} GROUP BY {c} "
       "HAVING COUNT(*)::int > 2",
       "SELECT {c}::text AS grp, COUNT(*)::int AS n FROM {t} GROUP BY {c} "
       "HAVING COUNT(*)::int >= 2"),
    _t(CAST, "date", "SELECT COUNT(*) FROM {t} WHERE {d}::date >= '{Y}-01-01'::date",
       "SELECT COUNT(*) FROM {t} WHERE {d}::date > '{Y}-01-01'::date"),
    # -- FILTER
    _t(FILTER, "num", "SELECT {c}, COUNT(*) FILTER (WHERE {n} > {N}) AS high FROM {t} "
       "GROUP BY {c}",
       "SELECT {c}, COUNT(*) FILTER (WHERE {n} >= {N}) AS high FROM {t} GROUP BY {c}"),
    _t(FILTER, "", "SELECT COUNT(*) FILTER (WHERE {c} = {cv}) * 100.0 / COUNT(*) AS pct FROM {t}",
       "SELECT COUNT(*) FILTER (WHERE {c} <> {cv}) * 100.0 / COUNT(*) AS pct FROM {t}"),
    _t(FILTER, "num", "SELECT SUM({n}) FILTER (WHERE {c} = {cv}) AS total FROM {t}",
       "SELECT SUM({n}) AS total FROM {t} WHERE {c} = {cv} OR {c} IS NULL"),
    # -- ILIKE
    _t(ILIKE, "text", "SELECT COUNT(*) FROM {t} WHERE {x} ILIKE '%{pat}%'",
       "SELECT COUNT(*) FROM {t} WHERE {x} LIKE '%{pat}%'"),
    _t(ILIKE, "text", "SELECT {k}, {x} FROM {t} WHERE {x} ILIKE '{pat}%'",
       "SELECT {k}, {x} FROM {t} WHERE {x} ILIKE '%{pat}%'"),
    # -- NULLIF
    _t(NULLIF, "", "SELECT COUNT(NULLIF({c}::text, {cv}::text)) FROM {t}",
       "SELECT COUNT({c}) FROM {t}"),
    _t(NULLIF, "num", "SELECT {c}, SUM({n}) / NULLIF(COUNT({n}), 0) AS mean FROM {t} "
       "GROUP BY {c}",
       "SELECT {c}, SUM({n}) / NULLIF(COUNT(*), 0) AS mean FROM {t} GROUP BY {c}"),
    _t(NULLIF, "text", "SELECT {k} FROM {t} WHERE NULLIF(TRIM({x}), '') IS NULL",
       "SELECT {k} FROM {t} WHERE {x} IS NULL"),
    # -- EXTRACT
    _t(EXTRACT, "date", "SELECT EXTRACT(YEAR FROM {d}::date) AS yr, COUNT(*) FROM {t} "
       "GROUP BY 1",
       "SELECT EXTRACT(MONTH FROM {d}::date) AS yr, COUNT(*) FROM {t} GROUP BY 1"),
    _t(EXTRACT, "date", "SELECT {k} FROM {t} WHERE EXTRACT(YEAR FROM {d}::date) = {Y}",
       "SELECT {k} FROM {t} WHERE EXTRACT(YEAR FROM {d}::date) BETWEEN {Y} AND {Y} + 1"),
    # -- DATE_TRUNC
    _t(DATE_TRUNC, "date", "SELECT DATE_TRUNC('month', {d}::date) AS m, COUNT(*) FROM {t} "
       "WHERE EXTRACT(YEAR FROM {d}::date) = {Y} GROUP BY 1",
       "SELECT DATE_TRUNC('year', {d}::date) AS m, COUNT(*) FROM {t} "
       "WHERE EXTRACT(YEAR FROM {d}::date) = {Y} GROUP BY 1"),
    _t(DATE_TRUNC, "date", "SELECT COUNT(*) FROM {t} WHERE DATE_TRUNC('year', {d}::timestamp) "
       "= '{Y}-01-01'::timestamp",
       "SELECT COUNT(*) FROM {t} WHERE DATE_TRUNC('month', {d}::timestamp) "
       "= '{Y}-01-01'::timestamp"),
    # -- STRING_AGG
    _t(STRING_AGG, "num", "SELECT {c}, STRING_AGG({k}::text, ', ' ORDER BY {k}) AS keys "
       "FROM {t} WHERE {n} > {N} GROUP BY {c}",
       "SELECT {c}, STRING_AGG({k}::text, ', ' ORDER BY {k}) AS keys "
       "FROM {t} WHERE {n} >= {N} GROUP BY {c}"),
    _t(STRING_AGG, "text", "SELECT STRING_AGG(DISTINCT {c}::text, ',' ORDER BY {c}::text) "
       "FROM {t} WHERE {x} ILIKE '%{pat}%'",
       "SELECT STRING_AGG({c}::text, ',' ORDER BY {c}::text) FROM {t} "
       "WHERE {x} ILIKE '%{pat}%'"),
    # -- DISTINCT ON
    _t(DISTINCT_ON, "num", "SELECT DISTINCT ON ({c}) {c}, {k}, {n} FROM {t} "
       "ORDER BY {c}, {n} DESC NULLS LAST, {k}",
       "SELECT DISTINCT ON ({c}) {c}, {k}, {n} FROM {t} ORDER BY {c}, {n} DESC, {k}"),
    _t(DISTINCT_ON, "parent", "SELECT DISTINCT ON ({p}.{pk}) {p}.{pk}, {p}.{pl}, {t}.{k} "
       "FROM {t} JOIN {p} ON {p}.{pk} = {t}.{fk} ORDER BY {p}.{pk}, {t}.{k}",
       "SELECT DISTINCT ON ({p}.{pk}) {p}.{pk}, {p}.{pl}, {t}.{k} "
       "FROM {t} JOIN {p} ON {p}.{pk} = {t}.{fk} ORDER BY {p}.{pk}, {t}.{k} DESC"),
    # -- window functions
    _t(WINDOW, "num", "SELECT {k}, {c}, {n} FROM (SELECT {k}, {c}, {n}, ROW_NUMBER() OVER "
       "(PARTITION BY {c} ORDER BY {n} DESC NULLS LAST, {k}) AS rn FROM {t}) AS ranked "
       "WHERE rn <= 2",
       "SELECT {k}, {c}, {n} FROM (SELECT {k}, {c}, {n}, ROW_NUMBER() OVER "
       "(ORDER BY {n} DESC NULLS LAST, {k}) AS rn FROM {t}) AS ranked WHERE rn <= 2"),
    _t(WINDOW, "num", "SELECT {k}, SUM({n}) OVER (PARTITION BY {c}) AS group_total FROM {t} "
       "WHERE {n} > {N}",
       "SELECT {k}, SUM({n}) OVER () AS group_total FROM {t} WHERE {n} > {N}"),
    _t(WINDOW, "", "SELECT DISTINCT {c}, COUNT(*) OVER (PARTITION BY {c}) AS n FROM {t}",
       "SELECT DISTINCT {c}, COUNT({c}) OVER (PARTITION BY {c}) AS n FROM {t}"),
    # -- LATERAL
    _t(LATERAL, "parent num", "SELECT {p}.{pk}, top.{n} FROM {p} CROSS JOIN LATERAL "
       "(SELECT {t}.{n} FROM {t} WHERE {t}.{fk} = {p}.{pk} ORDER BY {t}.{n} DESC NULLS LAST, "
       "{t}.{k} LIMIT 1) AS top",
       "SELECT {p}.{pk}, top.{n} FROM {p} CROSS JOIN LATERAL "
       "(SELECT {t}.{n} FROM {t} WHERE {t}.{fk} = {p}.{pk} ORDER BY {t}.{n} ASC NULLS LAST, "
       "{t}.{k} LIMIT 1) AS top"),
    _t(LATERAL, "parent", "SELECT {p}.{pk}, c.cnt FROM {p} LEFT JOIN LATERAL "
       "(SELECT COUNT(*) AS cnt FROM {t} WHERE {t}.{fk} = {p}.{pk}) AS c ON true",
       "SELECT {p}.{pk}, c.cnt FROM {p} JOIN LATERAL "
       "(SELECT COUNT(*) AS cnt FROM {t} WHERE {t}.{fk} = {p}.{pk}) AS c ON c.cnt > 0"),
    # -- generate_series
    _t(SERIES, "num", "SELECT g.b AS bucket, COUNT({t}.{k}) AS n FROM generate_series({lo}, "
       "{hi}, {step}) AS g(b) LEFT JOIN {t} ON {t}.{n} >= g.b AND {t}.{n} < g.b + {step} "
       "GROUP BY g.b",
       "SELECT g.b AS bucket, COUNT(*) AS n FROM generate_series({lo}, {hi}, {step}) AS g(b) "
       "LEFT JOIN {t} ON {t}.{n} >= g.b AND {t}.{n} < g.b + {step} GROUP BY g.b"),
    _t(SERIES, "date", "SELECT g.y, COUNT({t}.{k}) FROM generate_series({Y1}, {Y2}) AS g(y) "
       "LEFT JOIN {t} ON EXTRACT(YEAR FROM {t}.{d}::date) = g.y GROUP BY g.y",
       "SELECT g.y, COUNT({t}.{k}) FROM generate_series({Y1}, {Y2}) AS g(y) "
       "JOIN {t} ON EXTRACT(YEAR FROM {t}.{d}::date) = g.y GROUP BY g.y"),
    _t(SERIES, "", "SELECT g.i, {t}.{k} FROM generate_series(1, 5) AS g(i) "
       "JOIN {t} ON {t}.{c}::text = {cv}::text WHERE g.i <= 2 AND {t}.{k}::text < "
       "'{kmid}'",
       "SELECT g.i, {t}.{k} FROM generate_series(1, 5) AS g(i) "
       "JOIN {t} ON {t}.{c}::text = {cv}::text WHERE g.i < 2 AND {t}.{k}::text < "
       "'{kmid}'"),
    # -- CTE ... MATERIALIZED
    _t(MATERIALIZED, "num", "WITH big AS MATERIALIZED (SELECT {k}, {c}, {n} FROM {t} "
       "WHERE {n} > {N}) SELECT {c}, COUNT(*) FROM big GROUP BY {c}",
       "WITH big AS MATERIALIZED (SELECT {k}, {c}, {n} FROM {t} "
       "WHERE {n} >= {N}) SELECT {c}, COUNT(*) FROM big GROUP BY {c}"),
    _t(MATERIALIZED, "num", "WITH s AS MATERIALIZED (SELECT {c}, AVG({n}) AS a FROM {t} "
       "GROUP BY {c}) SELECT {c} FROM s WHERE a > (SELECT AVG({n}) FROM {t})",
       "WITH s AS MATERIALIZED (SELECT {c}, AVG({n}) AS a FROM {t} "
       "GROUP BY {c}) SELECT {c} FROM s WHERE a > (SELECT AVG(a) FROM s)"),
    _t(MATERIALIZED, "", "WITH picked AS NOT MATERIALIZED (SELECT {k}, {c} FROM {t} "
       "WHERE {c} = {cv}) SELECT COUNT(*) FROM picked",
       "WITH picked AS MATERIALIZED (SELECT {k}, {c} FROM {t} "
       "WHERE {c} <> {cv}) SELECT COUNT(*) FROM picked"),
    # -- numeric vs float division
    _t(DIVISION, "num", "SELECT {c}, SUM({n})::numeric / COUNT(*) AS mean FROM {t} "
       "GROUP BY {c}",
       "SELECT {c}, SUM({n}) / COUNT(*) AS mean FROM {t} GROUP BY {c}"),
    _t(DIVISION, "", "SELECT COUNT(*) FILTER (WHERE {c} = {cv}) * 100 / COUNT(*) AS pct "
       "FROM {t}",
       "SELECT COUNT(*) FILTER (WHERE {c} = {cv}) * 100.0 / COUNT(*) AS pct FROM {t}"),
    _t(DIVISION, "num", "SELECT {k}, {n} / 4 AS quarter FROM {t} WHERE {n} > {N}",
       "SELECT {k}, {n} / 4.0 AS quarter FROM {t} WHERE {n} > {N}"),
    _t(DIVISION, "num", "SELECT {k}, {n}::float / 3 AS third FROM {t} WHERE {n} > {N}",
       "SELECT {k}, ({n} / 3)::float AS third FROM {t} WHERE {n} > {N}"),
]
