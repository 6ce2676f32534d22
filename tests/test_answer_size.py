"""The byte cap per answer (issue 12, section 4): sizes, settings, the 54000 error."""

import doctest

import pytest

from siselect.runtime import answer_size
from siselect.runtime.answer_size import MAX_ANSWER_BYTES, AnswerBudget, byte_limit, rows_bytes
from siselect.runtime.errors import AnswerTooLarge, InvalidInput, QueryFailed


def test_doctests():
    assert doctest.testmod(answer_size).failed == 0


def test_sizes_follow_the_text():
    small = rows_bytes([(1, "x")] * 1000)
    large = rows_bytes([(1, "x" * 5000)] * 1000)
    assert large - small >= 1000 * 4999
    assert rows_bytes([]) == 0


def test_rows_of_five_kilobytes_are_refused_batch_by_batch():
    budget = AnswerBudget()
    batch = [(i, "y" * 5000) for i in range(1000)]
    with pytest.raises(AnswerTooLarge) as caught:
        for _ in range(100):  # 100,000 rows of 5 KB: the case of the issue
            budget.add(batch)
    assert caught.value.sqlstate == "54000"
    assert isinstance(caught.value, QueryFailed)  # a failed query to the pair's handlers
    assert MAX_ANSWER_BYTES < budget.used <= MAX_ANSWER_BYTES + rows_bytes(batch)


@pytest.mark.parametrize("setting, expected", [
    (None, MAX_ANSWER_BYTES), ("", MAX_ANSWER_BYTES), ("1048576", 2**20), ("64MB", 64 * 2**20),
    (" 512 kB", 512 * 2**10), ("1gb", 2**30),
])
def test_byte_limit_settings(setting, expected):
    assert byte_limit(setting) == expected


@pytest.mark.parametrize("setting", ["0", "-1", "12 parsecs", "1.5MB"])
def test_bad_settings_are_refused(setting):
    with pytest.raises(InvalidInput) as caught:
        byte_limit(setting)
    assert caught.value.sqlstate == "22023"
