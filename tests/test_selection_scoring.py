"""The evidence model and the schedule's bounds, on units built by hand (no database)."""

import math

from safety_fixtures import bench_module
from siselect.runtime.answers import exact_key
from siselect.selection.schedule import Match, contenders, next_round, open_pairs
from siselect.selection.scoring import (
    ACCURACY_SPREAD,
    DEFAULT_ACCURACY,
    PRIOR_WEIGHT,
    Unit,
    add_verdict,
    agreement,
    instance_points,
    log_ratio,
    pair_points,
    reach,
    reliability,
    uncertain_evidence,
    winner,
)


def test_exact_key_is_birds_rule_with_rounded_numbers():
    assert exact_key([(1, "a")]) != exact_key([("a", 1)])  # column order counts
    assert exact_key([(1, "a"), (1, "a")]) == exact_key([(1.0, "a")])  # duplicates do not
    assert exact_key([(0.1 + 0.2,)]) == exact_key([(0.3,)])
    assert exact_key([(1 / 3,)]) != exact_key([(0.33,)])
    assert exact_key([(None,)]) != exact_key([])  # a NULL row is a row


def test_reliability_weighs_meaning_and_vote_agreement():
    assert reliability(0.8, "meaningful", []) == 0.8
    assert math.isclose(reliability(0.8, "degenerate", []), 0.5 + 0.3 * 0.25)
    split = [{"rows": [[1]], "majority": True}] * 2 + [{"rows": [[2]], "majority": False}]
    assert math.isclose(agreement(split), 1 / 3)
    # A vote a noisy wrapper adds is no LLM sample: it does not count as disagreement.
    assert agreement([{"rows": [[1]], "majority": True}, {"rows": [[2]], "replaced": [[1]]}]) == 1


def _after_one_verdict(larger: int, meaning: str) -> Unit:
    """The winner of a lone candidate against a group ``larger`` times its size, after one
    verdict of a judge right 80% of the time, for the lone one, on an instance of ``meaning``."""
    small, large = Unit(0, [0], 0, 1), Unit(1, list(range(1, larger + 1)), 1, larger)
    r = reliability(0.8, meaning, [])
    small.evidence += log_ratio(True, r)
    large.evidence += log_ratio(False, r)
    return winner([small, large], "evidence")[0]


def test_one_sure_verdict_outweighs_a_twice_larger_group_not_a_three_times_larger_one():
    # Odds 4 to 1 against a prior of 2 ** 1.5 = 2.8 and 3 ** 1.5 = 5.2 (PRIOR_WEIGHT).
    assert PRIOR_WEIGHT == 1.5
    assert _after_one_verdict(2, "meaningful").uid == 0
    assert _after_one_verdict(3, "meaningful").uid == 1
    # A verdict on an empty instance moves the score a quarter as far: 1.35 to 1.
    assert _after_one_verdict(2, "degenerate").uid == 1


def test_the_prior_calibration_scores_a_weight_by_how_well_it_names_the_right_group():
    log_likelihood = bench_module("prior_calibration").log_likelihood
    assert math.isclose(log_likelihood([([2, 1, 1], 2)], 0), -math.log(3))  # no prior
    assert math.isclose(log_likelihood([([2, 1], 2)], 1.5), math.log(2 ** 1.5 / (2 ** 1.5 + 1)))
    larger_right = [([3, 1], 3), ([2, 1, 1], 2)]
    smaller_right = [([3, 1], 1)]
    weights = [0, 0.5, 1, 1.5, 2, 4]
    assert [log_likelihood(larger_right, w) for w in weights] == sorted(
        log_likelihood(larger_right, w) for w in weights)
    assert [log_likelihood(smaller_right, w) for w in weights] == sorted(
        (log_likelihood(smaller_right, w) for w in weights), reverse=True)
    # Mostly the larger group, not always: a weight between the extremes fits best.
    mixed = larger_right * 3 + smaller_right
    fits = {w: log_likelihood(mixed, w) for w in weights}
    assert max(fits, key=lambda w: fits[w]) not in (weights[0], weights[-1])


def test_the_same_verdicts_in_another_order_tie_and_input_order_decides():
    # Superhero task 718 at rival noise 0.3: two verdicts each way, added up in opposite
    # orders, left the second candidate ahead by the last bit of a float and it won.
    first, second = Unit(0, [0], 0, 1), Unit(1, [1], 1, 1)
    r = reliability(0.8, "meaningful", [])
    for matched in (True, False, True, False):
        first.evidence += log_ratio(matched, r)
    for matched in (False, True, False, True):
        second.evidence += log_ratio(matched, r)
    assert first.evidence != second.evidence  # what the sums are, unrounded
    assert winner([second, first], "evidence") == (first, "input order")


def test_points_take_each_pairs_majority_and_ties_go_to_the_larger_group():
    assert pair_points([1.0, 0.0, 1.0]) == 1.0 and pair_points([1.0, 0.0]) == 0.5
    assert instance_points(True, True, False) == 1.0
    assert instance_points(False, True, False) == 0.0
    assert instance_points(True, True, True) == instance_points(None, False, False) == 0.5
    a, b = Unit(0, [0], 0, 1), Unit(1, [1, 2], 1, 2)
    a.instance_points[0] = [0.5]
    b.instance_points[0] = [0.5]
    assert winner([a, b], "points") == (b, "consistency")


def test_a_unit_that_cannot_catch_up_is_not_played_any_more():
    units = [Unit(i, [i], i, 1) for i in range(4)]
    # Unit 0 beat everyone; units 1..3 lost to it and have one pair each left among them.
    for u in units[1:]:
        units[0].instance_points[u.uid] = [1.0]
        u.instance_points[u.uid] = [0.0]
    pairs = open_pairs(units)
    assert len(pairs) == 3
    alive = contenders(units, pairs, [], "points", 0.8, 1)
    assert alive == {0}
    assert next_round("adaptive", False, units, [], "points", 0.8, 1) == ([], [])
    assert next_round("round-robin", False, units, [], "points", 0.8, 1) == ([], [])
    # Units 2 and 3 have not met the leader yet: they can still win, so their pairs play,
    # the leader's first (it is ranked first).
    units[0].instance_points = {1: [1.0]}
    units[2].instance_points, units[3].instance_points = {}, {}
    pairs, _ = next_round("adaptive", False, units, [], "points", 0.8, 1)
    assert {(u.uid, v.uid) for u, v in pairs} == {(0, 2), (0, 3)}


def test_a_pair_waiting_to_be_separated_again_keeps_its_units_in_play():
    a, b = Unit(0, [0], 0, 1), Unit(1, [1], 1, 5)
    a.instance_points[0], b.instance_points[0] = [1.0], [0.0]
    match = Match(0, 0, 1, duels=[{}], again="drawn")
    alive = contenders([a, b], [], [(match, a, b)], "points", 0.8, 3)
    assert alive == {0, 1}


def test_an_uncertain_accuracy_weighs_one_verdict_as_the_mean_and_contradictions_less():
    assert abs(sum(ACCURACY_SPREAD) / len(ACCURACY_SPREAD) - DEFAULT_ACCURACY) < 0.01
    one = math.exp(uncertain_evidence(1, 0) - uncertain_evidence(0, 1))
    assert 3.9 < one < 4.0  # the fixed model at 0.8: 4
    split = math.exp(uncertain_evidence(2, 1) - uncertain_evidence(1, 2))
    assert 2.5 < split < 2.6  # the fixed model: 4, as for one verdict
    agreeing = math.exp(uncertain_evidence(2, 0) - uncertain_evidence(0, 2))
    assert 10 < agreeing < 12  # the fixed model: 16
    assert uncertain_evidence(0, 0) == 0.0


def test_two_verdicts_against_one_do_not_overturn_a_group_twice_as_large():
    """Yardstick generated sets at rival noise 0.3: six candidates against three, the judge
    against the six twice and for them once. Held uncertain, its accuracy says it errs; taken
    as known (0.8), the three win."""
    def played(spread):
        large, small = Unit(0, [0, 1, 2, 3, 4, 5], 0, 6), Unit(1, [6, 7, 8], 1, 3)
        for large_matched in (False, False, True):
            add_verdict(large, large_matched, DEFAULT_ACCURACY, 1.0, spread)
            add_verdict(small, not large_matched, DEFAULT_ACCURACY, 1.0, spread)
        return winner([large, small], "evidence")[0].first

    assert played(ACCURACY_SPREAD) == 0
    assert played(None) == 6


def test_an_uncertain_accuracy_bounds_every_future_of_a_unit():
    unit = Unit(0, [0], 0, 2)
    for matched in (True, False, True):
        add_verdict(unit, matched, DEFAULT_ACCURACY, 0.75, ACCURACY_SPREAD)
    up, down = reach(unit, "evidence", DEFAULT_ACCURACY, ACCURACY_SPREAD, 3)
    for more in range(4):
        future = Unit(0, [0], 0, 2, matched_weight=unit.matched_weight + more,
                      mismatched_weight=unit.mismatched_weight + 3 - more)
        future.evidence = uncertain_evidence(future.matched_weight, future.mismatched_weight)
        assert down - 1e-9 <= future.score("evidence") <= up + 1e-9
    assert down < unit.score("evidence") < up
