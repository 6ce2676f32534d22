"""Proposals drawn from witness pools: the paper's sizes and the growing samples."""

from siselect.instances.search import Pool, growing_proposals, paper_proposals, paper_sizes


def test_paper_sizes_follow_the_query_words():
    assert paper_sizes("SELECT SUM(CASE WHEN a THEN 1 END) FROM t", "SELECT 1") == (3, 4)
    assert paper_sizes("SELECT COUNT(*) FROM t", "SELECT 1 FROM t") == (1, 2)
    assert paper_sizes("SELECT a FROM t", "SELECT b FROM t") == (1, 1)


def test_paper_proposals_take_m_and_n_terms():
    pool = Pool(only1=[[1], [2], [3]], only2=[[10], [20]], both=[[100]])
    proposals = list(paper_proposals(pool, 1, 2, seed=3))
    assert len(proposals) == 42
    for rows in proposals:
        assert len([r for r in rows if r < 10]) == 1
        assert len([r for r in rows if 10 <= r < 100]) == 2


def test_paper_proposals_when_witness_sets_are_equal():
    pool = Pool(both=[[1, 2], [3], [4]])
    for rows in paper_proposals(pool, 1, 1, seed=0):
        assert set(rows) <= {1, 2, 3, 4} and rows


def test_growing_proposals_grow_and_are_reproducible():
    pool = Pool(
        only1=[[i] for i in range(20)],
        only2=[[100 + i] for i in range(3)],
        both=[[200 + i] for i in range(8)],
    )
    first = list(growing_proposals(pool, seed=5))
    assert first == list(growing_proposals(pool, seed=5))
    assert len(first[0]) == 2
    assert max(len(p) for p in first) >= 20 + 3
