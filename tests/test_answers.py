"""Comparing answers: the paper's rules (NULL rows, duplicates, sets, column order) and
the numeric tolerances for SQL against SQL and SQL against the judge."""

import datetime
import doctest
import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from siselect.runtime import answers
from siselect.runtime.answers import (
    JUDGE_TOLERANCE,
    Tolerance,
    answer_key,
    contained_in,
    matches_judge,
    normalise,
    parse_number,
    same_answer,
)
from siselect.runtime.values import canonical_rows


def test_doctests():
    assert doctest.testmod(answers).failed == 0


@pytest.mark.parametrize("a, b", [
    ([(1, "x"), (2, "y")], [(2, "y"), (1, "x")]),             # row order
    ([(1, "x")], [("x", 1)]),                                 # column order
    ([(1, "x"), (1, "x")], [(1, "x")]),                       # duplicates
    ([(1,), (None,)], [(1,)]),                                # an all-NULL row
    ([(None, None)], []),                                     # only all-NULL rows: empty
    ([(1, None)], [(None, 1)]),                               # NULL is a value in a row
    ([(2,)], [(2.0,)]),                                       # int and float
    ([(True,)], [(1,)]),                                      # booleans as SQLite's 1/0
    ([(1 / 3,)], [(0.33333333333,)]),                         # relative 1e-6
    ([(float("nan"),)], []),                                  # NaN is NULL
    ([], []),
])
def test_same(a, b):
    assert same_answer(a, b)
    assert same_answer(b, a)
    assert answer_key(a) == answer_key(b)


@pytest.mark.parametrize("a, b", [
    ([(1,)], [(2,)]),
    ([(1000000,)], [(1000001,)]),          # whole numbers compare exactly
    ([(1, "x")], [(1, "y")]),
    ([(1, 2)], [(1,)]),                    # arity
    ([(1,), (2,)], [(1,)]),                # a missing row
    ([(1,)], [(1,), (2,)]),                # an extra row
    ([("42",)], [(42,)]),                  # SQL text is not a number
    ([("a",)], [("A",)]),
    ([(" a",)], [("a",)]),
    ([(1, None)], [(1,)]),                 # a NULL in a row is kept
    ([(0.1,)], [(0.1001,)]),
    ([(None,)], [("",)]),
])
def test_different(a, b):
    assert not same_answer(a, b)
    assert not same_answer(b, a)
    assert answer_key(a) != answer_key(b)


def test_answer_key_groups_floats_at_nine_digits():
    assert answer_key([(0.1 + 0.2,)]) == answer_key([(0.3,)])
    assert answer_key([(1.0000001,)]) != answer_key([(1.0,)])
    assert hash(answer_key([(1, "a"), (2, "b")])) == hash(answer_key([("b", 2), ("a", 1)]))


def test_multiset_rows_are_not_sets():
    # (1, 1) is not (1,): a row is a multiset of its values.
    assert not same_answer([(1, 1)], [(1,)])
    assert same_answer([(1, 2, 1)], [(2, 1, 1)])


def test_tolerance_is_configurable():
    assert not same_answer([(1.5,)], [(1.6,)])
    assert same_answer([(1.5,)], [(1.6,)], Tolerance(relative=0.1))
    assert same_answer([(0.5,)], [(0.6,)], Tolerance(relative=0.0, absolute=0.11))
    assert not same_answer([(1 / 3,)], [(0.3333334,)], Tolerance(relative=0.0))


def test_judge_numbers_count_at_their_written_precision():
    assert matches_judge([(1 / 3,)], [[0.33]])
    assert matches_judge([(33.33333333,)], [[33.33]])
    assert matches_judge([(1 / 3,)], [[0.3333]])
    assert not matches_judge([(1 / 3,)], [[0.3]])        # at least 2 decimals
    assert not matches_judge([(1 / 3,)], [[0.34]])
    assert matches_judge([(41.996,)], [[42]])             # 42 read as 42.00
    assert not matches_judge([(33,)], [[33.33]])          # SQL's integer result is exact
    assert not matches_judge([(0.5,)], [[0.503]])         # the judge's precision, not SQL's
    assert matches_judge([(2.5e-05,)], [[2.5e-05]])


def test_judge_text_is_lenient():
    assert matches_judge([(42, "Spider-Man")], [["42", " Spider-Man "]])
    assert matches_judge([(1234,)], [["1,234"]])
    assert matches_judge([("2012",)], [[2012]])           # SQL text holding a number
    assert matches_judge([(None, 3)], [["null", 3]])
    assert matches_judge([(None,)], [["NULL"]])           # an all-NULL row either way
    assert not matches_judge([("Spider-Man",)], [["spider-man"]])
    assert matches_judge([], [])
    assert not matches_judge([(1,)], [])


def test_judge_tolerance_is_a_parameter():
    strict = Tolerance(min_decimals=None, lenient_text=False)
    assert not matches_judge([(1 / 3,)], [[0.33]], strict)
    assert not matches_judge([(42,)], [["42"]], strict)
    assert JUDGE_TOLERANCE.min_decimals == 2


def test_parse_number():
    assert parse_number("42") == 42 and isinstance(parse_number("42"), int)
    assert parse_number(" -3.5 ") == -3.5
    assert parse_number("1e3") == 1000.0
    assert parse_number(".5") == 0.5
    assert parse_number("1,234,567.5") == 1234567.5
    for text in ["", "abc", "1,23", "1.2.3", "inf", "nan", "0x10", "1e999", "12 apples"]:
        assert parse_number(text) is None, text


def test_normalise_drops_null_rows_and_duplicates():
    rows = normalise([(1, "a"), ("a", 1), (None, None), ()])
    assert len(rows) == 1
    assert rows == {(((1, "a"),), (1,))}


def test_contained_in():
    assert contained_in([(1,), (2.0000000001,)], [(3,), (2,), (1,)])
    assert not contained_in([(4,)], [(3,), (2,)])
    assert contained_in([(None,)], [(3,)])


def test_large_answers_compare_quickly():
    # Tolerant comparison must not be quadratic: 20,000 rows that differ in the last digits.
    a = [(i / 7, f"r{i % 10}") for i in range(20_000)]
    b = [(x * (1 + 1e-9), s) for x, s in reversed(a)]
    assert same_answer(a, b)
    assert not same_answer(a, b[:-1])


def test_non_finite_and_huge_numbers():
    assert same_answer([(math.inf,)], [(math.inf,)])
    assert not same_answer([(math.inf,)], [(-math.inf,)])
    assert not same_answer([(10**400,)], [(10**400 + 1,)])
    assert matches_judge([(10**400,)], [[10**400]])


values = st.one_of(st.none(), st.integers(-10**6, 10**6), st.text(max_size=5),
                   st.floats(allow_nan=False, allow_infinity=False, width=32))
answers_st = st.lists(st.lists(values, min_size=3, max_size=3), max_size=6)


@given(answers_st, st.randoms())
def test_order_and_duplicates_never_matter(rows, rnd):
    shuffled = [list(r) for r in rows] + [list(r) for r in rows[:2]]
    rnd.shuffle(shuffled)
    permutation = rnd.sample(range(3), 3)
    reordered = [[r[i] for i in permutation] for r in shuffled]
    assert same_answer(rows, reordered)
    assert answer_key(rows) == answer_key(reordered)
    assert matches_judge(rows, reordered)


@given(answers_st, answers_st)
def test_same_answer_is_symmetric_and_agrees_with_keys(a, b):
    assert same_answer(a, b) == same_answer(b, a)
    if answer_key(a) == answer_key(b):
        assert same_answer(a, b)


def test_a_missing_row_without_numbers_decides_without_an_index(monkeypatch):
    """Two answers of names that differ are told apart without indexing either: no
    tolerance matches a row that has no number with another row."""
    def no_index(self):
        raise AssertionError("indexed")

    monkeypatch.setattr(answers._Side, "index", no_index)
    names = [(f"hero {i}", None) for i in range(1000)]
    assert not same_answer(names, names[:-1])
    assert not same_answer(names[:-1], names)
    # With numbers, the rows that differ still go through the tolerant comparison.
    monkeypatch.undo()
    assert same_answer([("a", 1.0000000001), ("b", None)], [("b", None), ("a", 1.0)])
    assert not same_answer([("a", 1.0), ("b", None)], [("a", 1.0), ("c", None)])
    assert not same_answer([("a", 1.0), ("b", None)], [("a", 1.1), ("b", None)])


pairs_st = st.lists(st.tuples(st.one_of(st.none(), st.sampled_from("abc")), st.one_of(
    st.none(), st.sampled_from([1, 2, 1.0000000001, 1.5, 2.0000001]))), max_size=6)


@given(pairs_st, pairs_st)
def test_same_answer_agrees_with_a_comparison_row_by_row(a, b):
    """same_answer's shortcuts (a row without numbers, hashing, cells) agree with matching
    every row against every other by numbers_match, on rows of one text and one number."""
    def matched(row, others):
        return any(r[0] == row[0] and len(r[1]) == len(row[1]) and all(
            answers.numbers_match(x, y, answers.SQL_TOLERANCE)
            for x, y in zip(r[1], row[1], strict=True)) for r in others)
    na, nb = normalise(a), normalise(b)
    assert same_answer(a, b) == (all(matched(r, nb) for r in na)
                                 and all(matched(r, na) for r in nb))


def test_fetched_rows_come_back_as_canonical_tuples():
    """Rows of plain values are taken as they are; one value to convert anywhere in a row
    converts the row (a NaN after a name, a Decimal, a date, an array)."""
    rows = [("a", 1, None, True), ["b", 2], ("c", math.nan), (Decimal("2.50"), "d"),
            (Decimal("3"),), ("e", datetime.date(2024, 1, 31)), ("f", [Decimal("1.5"), None]),
            ("g", [1, "x", None]), ([2, math.nan],)]
    assert canonical_rows(rows) == [("a", 1, None, True), ("b", 2), ("c", None), (2.5, "d"),
                                    (3,), ("e", "2024-01-31"), ("f", [1.5, None]),
                                    ("g", [1, "x", None]), ([2, None],)]
    assert all(type(r) is tuple for r in canonical_rows(rows))
