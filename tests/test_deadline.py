"""Issue 12, section 3: Python work that heeds cancel and statement_timeout, and comparison
by hashing on every number (no column decides the cost alone).

The cancel tests run siselect.separate in the server on two 100,000-row answers that are
the same only under the tolerance, so the call spends its time fetching, then comparing;
a pg_cancel_backend from another connection lands in either phase and must end the call
within a few seconds. Each prints how long the call took after the cancel as a ratio of
its normal duration.
"""

import math
import threading
import time

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CountingExecutor
from siselect.instances.minimise import ddmin
from siselect.instances.references import referenced_rows
from siselect.runtime import deadline
from siselect.runtime.answers import (
    JUDGE_TOLERANCE,
    SQL_TOLERANCE,
    Tolerance,
    _numbers_match,
    contained_in,
    normalise,
    same_answer,
)
from siselect.runtime.errors import Cancelled, SiselectError

# ---------------------------------------------------------------- comparison by cells


def brute_same(a, b, tolerance: Tolerance) -> bool:
    """The definition, quadratic: every row of each has an equal row in the other."""
    na, nb = normalise(a, tolerance), normalise(b, tolerance)

    def covered(probes, others, first: bool) -> bool:
        return all(
            any(t == u and len(n) == len(m) and _numbers_match(n, m, tolerance, first)
                for u, m in others)
            for t, n in probes
        )

    return covered(na, nb, True) and covered(nb, na, False)


NUMBERS = [0, 1, 2, -3, 1.0, 0.5, 0.5000001, 0.50000001, 0.333333, 0.33, 0.335, 0.3349,
           1e9, 1e9 + 1, 1e9 + 0.5, 123456789, 123456789.4, -1e-9, 1e-9, 0.005, -0.005,
           10**30, 1e30, math.inf, -math.inf, 2.0000001]
VALUES = st.one_of(st.sampled_from(NUMBERS), st.sampled_from(["a", "0.33", " 2 ", None]),
                   st.floats(allow_nan=False, width=32))
TOLERANCES = [SQL_TOLERANCE, JUDGE_TOLERANCE, Tolerance(relative=0.0),
              Tolerance(relative=0.0, absolute=0.01), Tolerance(relative=1e-2),
              Tolerance(relative=0.6)]


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 3).flatmap(lambda k: st.tuples(
    st.lists(st.tuples(*[VALUES] * k), max_size=4),
    st.lists(st.tuples(*[VALUES] * k), max_size=4),
    st.lists(st.sampled_from([0.0, 1e-9, -1e-7, 1e-5, 1e-3]), min_size=1, max_size=4),
)), st.sampled_from(TOLERANCES))
def test_hashed_comparison_agrees_with_the_definition(data, tolerance):
    a, b, noise = data
    # Half the cases: b is a with float noise, the tolerance's borderline.
    near = [tuple(x * (1 + noise[i % len(noise)]) if isinstance(x, float) else x for x in r)
            for i, r in enumerate(a)]
    for other in (b, near):
        assert same_answer(a, other, tolerance) == brute_same(a, other, tolerance)


@pytest.mark.parametrize("shape", ["constant first", "constant everywhere but one",
                                   "whole and fractional", "big whole numbers"])
def test_shapes_that_defeated_the_first_column_index(shape):
    rows = 3000
    if shape == "constant first":
        a = [(7, i * 0.1) for i in range(rows)]
    elif shape == "constant everywhere but one":
        a = [(7, 7.5, 7.25, i * 0.01) for i in range(rows)]
    elif shape == "whole and fractional":
        a = [(i / 4,) for i in range(rows)]  # every fourth is whole
    else:
        a = [(10**9 + i, 0.5) for i in range(rows)]
    b = [tuple(x * (1 + 1e-9) if isinstance(x, float) else x for x in r) for r in a]
    assert same_answer(a, b) and same_answer(b, a)
    changed = list(b)
    changed[rows // 2] = tuple(x * 1.001 if isinstance(x, float) else x + 1
                               for x in changed[rows // 2])
    assert not same_answer(a, changed)
    assert contained_in(a[:-1], b)


# ---------------------------------------------------------------- deadline


def test_a_scope_ends_with_its_exception():
    with deadline.scope(0.0):
        time.sleep(0.001)
        with pytest.raises(Cancelled) as caught:
            deadline.check()
    assert caught.value.sqlstate == "57014"
    deadline.check()  # outside the scope nothing limits


def test_the_outer_deadline_wins_over_a_pairs_budget():
    class PairSpent(SiselectError):
        pass

    with deadline.scope(0.0), deadline.scope(0.0, exceeded=lambda: PairSpent("pair", "57014")):
        time.sleep(0.001)
        with pytest.raises(Cancelled):
            deadline.check()
    with deadline.scope(60.0), deadline.scope(0.0, exceeded=lambda: PairSpent("pair", "57014")):
        time.sleep(0.001)
        with pytest.raises(PairSpent):
            deadline.check()


def test_remaining_time_bounds_waits():
    assert deadline.bounded(300.0) == 300.0
    with deadline.scope(2.0):
        assert 1.5 < deadline.bounded(300.0) <= 2.0
        with deadline.scope(100.0):
            assert deadline.bounded(300.0) <= 2.0  # the nearer limit counts


def test_poll_runs_at_most_every_poll_interval():
    calls = []
    with deadline.scope(None, poll=lambda: calls.append(time.monotonic())):
        started = time.monotonic()
        while time.monotonic() - started < 0.3:
            deadline.check()
    assert 3 <= len(calls) <= 0.3 / deadline.POLL_SECONDS + 2
    gaps = [b - a for a, b in zip(calls, calls[1:], strict=False)]
    assert all(gap >= deadline.POLL_SECONDS * 0.99 for gap in gaps)


def test_comparison_and_minimisation_stop_at_the_deadline():
    a = [(0, i * 0.1) for i in range(20_000)]
    b = [(0, i * 0.1 * (1 + 1e-9)) for i in range(20_000)]
    with deadline.scope(0.0):
        time.sleep(0.001)
        with pytest.raises(Cancelled):
            same_answer(a, b)
        with pytest.raises(Cancelled):
            ddmin(list(range(100)), lambda rows: 42 in rows)


def test_statement_seconds_left_reads_the_callers_timeout(conn):
    def scalar(sql):
        return conn.execute(sql).fetchone()[0]

    conn.execute("SET statement_timeout = '10s'")
    left = deadline.statement_seconds_left(scalar)
    assert left is not None and 9.0 < left <= 10.0
    conn.execute("SET statement_timeout = 0")
    assert deadline.statement_seconds_left(scalar) is None


# ---------------------------------------------------------------- referenced_rows


def test_referenced_rows_stops_at_its_cap(executor):
    from siselect.runtime.catalog import load_catalog
    from siselect.sqltext.transpile import to_tree

    counting = CountingExecutor(executor)
    catalog = load_catalog(counting)
    trees = [to_tree("SELECT s.superhero_name FROM superhero s JOIN colour c "
                     "ON c.id = s.eye_colour_id", "postgres", catalog)]
    total = sum(executor.run(f"SELECT count(*) FROM {t}").rows[0][0]
                for t in ("superhero", "colour"))
    counting.fetched = 0
    assert referenced_rows(counting, catalog, trees, 100) is None
    assert counting.fetched == 1  # a count up to 101: not the table's 750 rows, no row id
    every = referenced_rows(counting, catalog, trees, total)
    assert every is not None and len(every) == total


# ---------------------------------------------------------------- cancel in the server

ROWS = 100_000
COLUMNS = 6


@pytest.fixture(scope="module")
def floats_table(dsn):
    # Dropped at the end: other tests read every table on the session database's path.
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS public.deadline_floats")
        cols = ", ".join(f"sin(i * {k + 1}) * 1000 AS x{k}" for k in range(COLUMNS))
        c.execute(f"CREATE TABLE public.deadline_floats AS SELECT i, {cols} "
                  f"FROM generate_series(1, {ROWS}) AS g(i)")
        c.execute("GRANT SELECT ON public.deadline_floats TO PUBLIC")
        yield "public.deadline_floats"
        c.execute("DROP TABLE public.deadline_floats")


def separate_sql(table: str) -> tuple[str, tuple]:
    cols = ", ".join(f"x{k}" for k in range(COLUMNS))
    noisy = ", ".join(f"x{k} * (1 + 1e-9)" for k in range(COLUMNS))
    return ("SELECT siselect.separate(%s, %s)",
            (f"SELECT i, {cols} FROM {table}", f"SELECT i, {noisy} FROM {table}"))


def run_in_thread(dsn: str, sql: str, args: tuple):
    conn = psycopg.connect(dsn, autocommit=True)
    outcome: dict = {"conn": conn, "started": time.monotonic()}

    def work() -> None:
        try:
            outcome["result"] = conn.execute(sql, args).fetchone()[0]
        except psycopg.Error as exc:
            outcome["error"] = exc
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread, outcome, conn.info.backend_pid


@pytest.fixture(scope="module")
def normal_run(dsn, floats_table):
    """The call undisturbed: its duration, and how long it fetched before comparing."""
    sql, args = separate_sql(floats_table)
    with psycopg.connect(dsn, autocommit=True) as c:
        started = time.monotonic()
        result = c.execute(sql, args).fetchone()[0]
        seconds = time.monotonic() - started
    assert result["status"] == "same_answer", result
    timings = result["timings"]
    # Before separate() starts: a new backend imports the package, checks the queries.
    before = seconds - timings["total"]
    execution = timings["execution"]
    print(f"\nnormal call: {seconds:.2f}s: {before:.2f}s before separating, "
          f"{execution:.2f}s fetching, {timings['total'] - execution:.2f}s comparing")
    return seconds, before, execution


@pytest.mark.parametrize("phase", ["execution", "comparison"])
def test_pg_cancel_backend_ends_the_call_promptly(dsn, floats_table, normal_run, phase):
    seconds, before, execution = normal_run
    comparing = seconds - before - execution
    if min(execution, comparing) < 0.3:
        pytest.skip(f"a phase is too short to aim a cancel at ({execution:.2f}s fetching, "
                    f"{comparing:.2f}s comparing)")
    at = before + (execution / 2 if phase == "execution" else execution + comparing / 2)
    thread, outcome, pid = run_in_thread(dsn, *separate_sql(floats_table))
    try:
        time.sleep(max(0.0, outcome["started"] + at - time.monotonic()))
        with psycopg.connect(dsn, autocommit=True) as admin:
            cancelled = time.monotonic()
            assert admin.execute("SELECT pg_cancel_backend(%s)", (pid,)).fetchone()[0]
        thread.join(60)
        assert not thread.is_alive(), "the cancelled call did not end"
        assert isinstance(outcome.get("error"), psycopg.errors.QueryCanceled), outcome
        after = outcome["ended"] - cancelled
        print(f"\ncancel during {phase} at {at:.2f}s: ended {after:.3f}s later, "
              f"{after / seconds:.3f} of the normal {seconds:.2f}s")
        assert after < 3.0
        assert outcome["conn"].execute("SELECT 1").fetchone() == (1,)
    finally:
        outcome["conn"].close()


def test_statement_timeout_during_comparison_ends_the_call(dsn, floats_table, normal_run):
    seconds, before, execution = normal_run
    comparing = seconds - before - execution
    if comparing < 0.3:
        pytest.skip(f"comparison too short to time out in ({comparing:.2f}s)")
    timeout_ms = int((before + execution + comparing / 2) * 1000)
    sql, args = separate_sql(floats_table)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"SET statement_timeout = {timeout_ms}")
        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):
            c.execute(sql, args)
        elapsed = time.monotonic() - started
    print(f"\nstatement_timeout {timeout_ms} ms: the call ended after {elapsed:.2f}s "
          f"({elapsed - timeout_ms / 1000:.3f}s late)")
    assert elapsed - timeout_ms / 1000 < 3.0

