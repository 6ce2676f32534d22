"""A reference whose own answer on D' is one of several gives no verdict there.

The reference judge runs a trusted query on D'. Where that query's ``ORDER BY ... LIMIT``
meets rows of D' that tie, its answer is the engine's pick among them, and a verdict on it
says nothing of the candidates (the yardstick's K=5 tasks: 8 of 635 judged duels). The judge
abstains, says why, and the pair is separated again on another instance.
"""

from siselect.instances.separate import Options
from siselect.selection.judges import ReferenceJudge
from siselect.selection.tournament import JUDGE_TIED, run_tournament
from siselect.selection.verdict import JudgeContext
from siselect.sqltext.transpile import to_tree

# Every row ties on the constant: which one comes first is the engine's choice.
ANY_HERO = "SELECT superhero_name FROM superhero ORDER BY 1 = 1 LIMIT 1"


def _on_d(executor, catalog):
    return JudgeContext("q", None, {}, catalog,
                        run_on_instance=lambda tree: executor.run(tree.sql(dialect="postgres")))


def test_the_reference_abstains_where_its_answer_hangs_on_ties(executor):
    from siselect.runtime.catalog import load_catalog

    context = _on_d(executor, load_catalog(executor))
    tied = ReferenceJudge(to_tree(ANY_HERO, "postgres")).answer(context)
    assert tied.rows is None and "tie" in tied.ties and tied.error is None
    sure = ReferenceJudge(to_tree("SELECT superhero_name FROM superhero ORDER BY id LIMIT 1",
                                  "postgres")).answer(context)
    assert sure.rows and sure.ties is None


def test_a_tied_verdict_is_no_verdict_and_the_pair_is_separated_again(executor):
    # Separating "pairs of heroes of one height" from none takes two heroes, on which the
    # reference's pick is the engine's.
    candidates = ["SELECT count(*) FROM superhero AS s JOIN superhero AS t ON s.id < t.id "
                  "AND s.height_cm = t.height_cm", "SELECT 0 AS count"]
    result = run_tournament(executor, candidates, "q", None,
                            ReferenceJudge(to_tree(ANY_HERO, "postgres")), Options())
    tied = [d for d in result["duels"] if (d.get("judge") or {}).get("ties")]
    assert tied, result["duels"]
    for duel in tied:
        assert duel["verdict"] == "draw" and JUDGE_TIED in duel["reason"]
        assert duel["judge"]["rows"] is None and duel["judge"]["error"] is None
    assert max(d.get("attempt", 1) for d in result["duels"]) > 1  # asked again elsewhere
