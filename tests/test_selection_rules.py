"""The tournament's rules (issue 15), by their effects on superhero: exact grouping, every
member judged on D', pairs separated again away from used rows, the adaptive schedule,
the paper's rules under strategy paper, and a reference judge that sees only D'."""

from conftest import schema_valid, untimed
from siselect.instances.separate import Options
from siselect.runtime.catalog import load_catalog
from siselect.selection import tournament
from siselect.selection.judges import NoisyJudge, NoJudge, ReferenceJudge
from siselect.selection.rules import PAPER, Rules
from siselect.selection.scoring import PRIOR_WEIGHT
from siselect.sqltext.transpile import to_tree

QUESTION = "How many superheroes are taller than 200 cm?"
RIGHT = "SELECT COUNT(*) FROM superhero WHERE height_cm > 200"
# Equal to RIGHT on D (every tall hero has a publisher), not on a D' without publishers.
WITH_PUBLISHER = ("SELECT COUNT(*) FROM superhero s JOIN publisher p "
                  "ON s.publisher_id = p.id WHERE s.height_cm > 200")
TALLER = "SELECT COUNT(*) FROM superhero WHERE height_cm > 210"
BOUNDARY = "SELECT COUNT(*) FROM superhero WHERE height_cm >= 198"
ALL = "SELECT COUNT(*) FROM superhero"
NOBODY = "SELECT COUNT(*) + 100 FROM superhero"


def run(executor, candidates, judge_sql=RIGHT, options=None, rules=None, judge=None,
        question=QUESTION):
    catalog = load_catalog(executor)
    judge = judge or ReferenceJudge(to_tree(judge_sql, "postgres", catalog))
    return schema_valid("tournament", tournament.run_tournament(
        executor, candidates, question, None, judge, options or Options(), catalog=catalog,
        rules=rules))


def superhero_ids(duel):
    table = duel["instance"]["superhero"]
    at = table["columns"].index("id")
    return {row[at] for row in table["rows"]}


def test_exact_grouping_tells_column_orders_apart(executor):
    """Two candidates with the gold's column order against one without: the paper's key puts
    all three in one group represented by the first; BIRD counts that one wrong."""
    name_first = "SELECT superhero_name, height_cm FROM superhero WHERE height_cm > 250"
    height_first = "SELECT height_cm, superhero_name FROM superhero WHERE height_cm > 250"
    candidates = [name_first, height_first, height_first.replace("> 250", ">= 251")]
    question = "Name the heroes taller than 250 cm and their heights"
    exact = run(executor, candidates, height_first, question=question)
    assert exact["rules"]["grouping"] == "exact"
    assert [g["members"] for g in exact["groups"]] == [[0], [1, 2]]
    # The duel gets a non-empty instance, and the judge's column order decides.
    assert exact["duels"][0]["separation"] == "separated"
    assert exact["duels"][0]["matched"] == [1, 2]
    assert exact["winner"]["index"] == 1
    paper = run(executor, candidates, height_first, rules=Rules(grouping="paper"),
                question=question)
    assert paper["rules"]["grouping"] == "paper"
    assert [g["members"] for g in paper["groups"]] == [[0, 1, 2]]
    assert paper["decided_by"] == "single group" and paper["winner"]["index"] == 0


def test_every_member_runs_on_d_prime_and_a_group_splits_by_its_answers(executor):
    # RIGHT represents the group; on a D' of heroes only, WITH_PUBLISHER counts nobody,
    # which is what the judge (the same join) answers: the member wins by its own record.
    result = run(executor, [RIGHT, WITH_PUBLISHER, TALLER], WITH_PUBLISHER)
    assert result["splits"] >= 1
    first = result["duels"][0]
    assert first["members"] == {"a": [0, 1], "b": [2]}
    assert 1 in first["matched"] and 0 not in first["matched"]
    assert next(g for g in result["groups"] if 0 in g["members"])["parts"] == 2
    assert result["winner"]["index"] == 1
    records = {m["index"]: m for m in result["members"]}
    assert records[1]["matched"] > 0 and records[0]["mismatched"] > 0
    # The paper's rule runs the representative only: no split, input order decides.
    paper = run(executor, [RIGHT, WITH_PUBLISHER, TALLER], WITH_PUBLISHER,
                rules=Rules(members="representative"))
    assert paper["splits"] == 0 and paper["winner"]["index"] != 1


def test_a_drawn_pair_is_separated_again_away_from_the_rows_used(executor):
    # A judge whose answer neither side gives: every duel drawn.
    result = run(executor, [RIGHT, BOUNDARY], NOBODY)
    duels = result["duels"]
    assert [d["attempt"] for d in duels] == [1, 2, 3]
    assert result["separated_again"] == {"drawn": 2, "against_prior": 0, "close": 0, "pairs": 1,
                                         "both_ways": 0, "ambiguous": 0}
    assert duels[1]["excluded_rows"] == duels[0]["rows"]
    assert not superhero_ids(duels[0]) & superhero_ids(duels[1])
    assert not (superhero_ids(duels[0]) | superhero_ids(duels[1])) & superhero_ids(duels[2])
    once = run(executor, [RIGHT, BOUNDARY], NOBODY, rules=Rules(instances=1))
    assert len(once["duels"]) == 1 and once["separated_again"]["pairs"] == 0
    # A judge that gives no answer is not asked again on another instance.
    silent = run(executor, [RIGHT, BOUNDARY], judge=NoJudge())
    assert len(silent["duels"]) == 1 and silent["separated_again"]["pairs"] == 0


def test_a_verdict_against_a_much_larger_group_is_checked_on_more_instances(executor):
    wrong = [ALL, "SELECT COUNT(id) FROM superhero", "SELECT COUNT(1) FROM superhero"]
    result = run(executor, [*wrong, RIGHT])
    assert result["separated_again"]["against_prior"] >= 1
    assert len(result["duels"]) >= 2 and result["winner"]["index"] == 3
    assert result["decided_by"] == "tournament"


def test_the_adaptive_schedule_judges_fewer_duels_than_round_robin(executor):
    candidates = [ALL, BOUNDARY, RIGHT, TALLER, "SELECT COUNT(*) FROM superhero WHERE "
                  "height_cm > 190", "SELECT COUNT(*) FROM superhero WHERE height_cm > 300"]
    adaptive = run(executor, candidates)
    full = run(executor, candidates, rules=Rules(schedule="round-robin"))
    assert adaptive["winner"]["index"] == full["winner"]["index"] == 2
    assert full["schedule"]["played"] == full["schedule"]["pairs"] == 15
    assert adaptive["schedule"]["judged"] < full["schedule"]["judged"]
    assert adaptive["schedule"]["skipped"] > 0
    assert adaptive["schedule"]["played"] + adaptive["schedule"]["skipped"] == 15


def test_strategy_paper_keeps_the_papers_rules(executor):
    result = run(executor, [BOUNDARY, RIGHT, ALL], options=Options(strategy="paper"))
    assert {k: result["rules"][k] for k in PAPER} == PAPER
    assert result["rules"]["prior_weight"] is None  # points have no prior
    assert result["winner"]["index"] == 1
    assert all(d["members"]["a"] == [d["a"]] or len(d["members"]["a"]) == 1
               for d in result["duels"])
    assert len(result["duels"]) == 3  # round-robin, one instance a pair


def test_the_reference_judge_sees_only_d_prime(executor):
    """The reference query counts every hero: 750 on D, the instance's heroes on D'."""
    result = run(executor, [RIGHT, BOUNDARY], ALL, rules=Rules(instances=1))
    judged = [d for d in result["duels"] if d.get("judge")]
    assert judged
    for duel in judged:
        assert duel["judge"]["rows"] == [[len(duel["instance"]["superhero"]["rows"])]]
        assert duel["judge"]["rows"] != [[750]]


def test_same_seed_same_choice_with_every_rule(executor):
    candidates = [ALL, BOUNDARY, RIGHT, WITH_PUBLISHER, TALLER]
    for rules in (Rules(), Rules(scoring="points"), Rules(schedule="round-robin")):
        runs = [untimed(run(executor, candidates, options=Options(seed=3), rules=rules))
                for _ in range(2)]
        assert runs[0] == runs[1]


def test_a_winner_not_yet_sure_duels_its_runner_up_again(executor):
    """One verdict of a judge right 80% of the time leaves 4 to 1, two 16 to 1: not yet 19
    to 1, so the pair plays a third instance; the reference query's verdict (99 to 1) is
    enough."""
    unsure = run(executor, [BOUNDARY, RIGHT], rules=Rules(judge_accuracy=0.8))
    assert unsure["separated_again"]["close"] >= 2
    assert len(unsure["duels"]) == 3 and unsure["winner"]["index"] == 1
    assert unsure["duels"][1]["excluded_rows"] == unsure["duels"][0]["rows"]
    sure = run(executor, [BOUNDARY, RIGHT])
    assert len(sure["duels"]) == 1 and sure["separated_again"]["close"] == 0


class _Script:
    """NoisyJudge's draws read from a script: 0 replaces the judge's answer with a rival's
    (the first that differs), 1 keeps it."""

    def __init__(self, draws):
        self.draws = list(draws)

    def random(self):
        return self.draws.pop(0) if self.draws else 1.0

    def randrange(self, n):
        return 0


def test_a_pair_whose_verdicts_went_both_ways_takes_more_instances(executor):
    """A judge wrong on the first and third instances names the wrong candidate 2 to 1 on
    three; verdicts that went both ways let the pair take more instances: on five the
    judge, right on the fourth and fifth, names the right one 3 to 2, a lead of one verdict
    (4 to 1, under 19 to 1), and on seven 5 to 2."""
    catalog = load_catalog(executor)
    rivals = [to_tree(q, "postgres", catalog) for q in (BOUNDARY, RIGHT)]
    judge = NoisyJudge(ReferenceJudge(rivals[1]), 0.5, _Script([0, 1, 0]), rivals)
    result = run(executor, [BOUNDARY, RIGHT], judge=judge, rules=Rules(judge_accuracy=0.8))
    assert judge.replaced == 2
    duels = [d for d in result["duels"] if d.get("judge")]
    assert [d["matched"] for d in duels] == [[0], [1], [0], [1], [1], [1], [1]]
    assert result["winner"]["index"] == 1
    assert result["separated_again"]["both_ways"] >= 1
    # Every instance away from the rows of the earlier ones.
    assert all(d["excluded_rows"] >= i for i, d in enumerate(duels[1:], start=1))


def test_a_unit_split_early_in_a_round_is_scored_on_the_rounds_later_duels(executor):
    """Round-robin plays every pair in one round: the group split by its first duel still
    has both parts scored on its second."""
    result = run(executor, [RIGHT, WITH_PUBLISHER, TALLER, ALL], WITH_PUBLISHER,
                 rules=Rules(schedule="round-robin", instances=1, scope="pair"))
    assert result["splits"] >= 1
    for member in result["members"]:
        ran = [d for d in result["duels"] if d.get("judge") and member["index"] in
               d["members"]["a"] + d["members"]["b"]]
        assert member["matched"] + member["mismatched"] + member["abstained"] == len(ran)


def test_every_verdict_weighs_on_every_unit_each_run_on_its_d_prime(executor):
    """The judge names an answer: a unit outside the duel is compared with it too, so a
    unit that played fewer duels is not spared the evidence the others collected."""
    candidates = [BOUNDARY, TALLER, RIGHT, ALL]
    wide = run(executor, candidates, rules=Rules(schedule="round-robin", instances=1))
    assert wide["rules"]["scope"] == "all"
    assert wide["rules"]["prior_weight"] == PRIOR_WEIGHT
    judged = [d for d in wide["duels"] if d.get("judge")]
    assert len(judged) == 6
    records = {m["index"]: m for m in wide["members"]}
    for record in records.values():
        assert record["matched"] + record["mismatched"] == len(judged)
    # RIGHT is the judge: it matches on every instance, its own duels' and the others'.
    assert records[2]["matched"] == len(judged)
    assert all(2 in d["matched"] for d in judged)
    pair = run(executor, candidates, rules=Rules(schedule="round-robin", instances=1,
                                                 scope="pair"))
    counts = {m["index"]: m["matched"] + m["mismatched"] for m in pair["members"]}
    assert counts == {0: 3, 1: 3, 2: 3, 3: 3}
    assert records[2]["evidence"] > {m["index"]: m for m in pair["members"]}[2]["evidence"]
    assert wide["winner"]["index"] == pair["winner"]["index"] == 2


def test_a_pair_one_hero_separates_is_judged_again_on_an_instance_that_overlaps(executor):
    """Only A-Bomb (id 2) tells these two apart, so no instance avoids the first one's rows;
    a judge right 80% of the time gets another instance all the same, one that holds A-Bomb
    among other rows."""
    tall = ("SELECT DISTINCT s.superhero_name FROM superhero s "
            "JOIN hero_power hp ON hp.hero_id = s.id WHERE s.height_cm > 200")
    result = run(executor, [tall, tall + " AND s.id <> 2"], tall,
                 rules=Rules(judge_accuracy=0.8))
    duels = result["duels"]
    assert len(duels) >= 2 and result["separated_again"]["close"] >= 1
    assert "shared_rows" not in duels[0] and duels[1]["shared_rows"] >= 1
    assert all(2 in superhero_ids(d) for d in duels[:2])
    assert duels[0]["instance"] != duels[1]["instance"]
    assert result["winner"]["index"] == 0


def test_an_overlapping_instance_leaves_out_a_row_the_search_chose(executor):
    """With references kept, A-Bomb's instance also holds the rows his hero row references
    (publisher, colours, ...), added after the search: leaving one of those out, the search
    chooses the same rows and the same instance comes back. Each search for an overlapping
    instance leaves out a row the first search chose, and the first such search finds one."""
    tall = ("SELECT DISTINCT s.superhero_name FROM superhero s "
            "JOIN hero_power hp ON hp.hero_id = s.id WHERE s.height_cm > 200")
    catalog = load_catalog(executor)
    memo: dict = {}
    result = schema_valid("tournament", tournament.run_tournament(
        executor, [tall, tall + " AND s.id <> 2"], QUESTION, None,
        ReferenceJudge(to_tree(tall, "postgres", catalog)), Options(with_references=True),
        catalog=catalog, separations=memo, rules=Rules(judge_accuracy=0.9)))
    first = next(kept.sep for (_, _, exclude, _), kept in memo.items() if not exclude)
    chosen = set(first["chosen_row_ids"])
    assert chosen < set(first["row_ids"])  # referenced rows were added to the chosen ones
    single = [exclude[0] for (_, _, exclude, _) in memo if len(exclude) == 1]
    assert single and set(single) <= chosen
    assert len(single) == 1
    assert result["duels"][1]["shared_rows"] >= 1
