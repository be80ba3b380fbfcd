from core.retrieval.fusion import minmax, rrf_fusion, weighted_fusion


def test_minmax_edges():
    assert minmax([]) == {}
    assert minmax([("a", 3.0)]) == {"a": 1.0}
    assert minmax([("a", 0.0), ("b", 0.0)]) == {"a": 0.0, "b": 0.0}
    assert minmax([("a", 4.0), ("b", 2.0), ("c", 0.0)]) == {"a": 1.0, "b": 0.5, "c": 0.0}


def test_weighted_fusion_renormalizes_over_active_strategies():
    rankings = {
        "keyword": [("a", 10.0), ("b", 5.0), ("c", 0.0)],
        "semantic": [("b", 0.9), ("a", 0.5)],
    }
    combined, normalized = weighted_fusion(
        rankings, {"keyword": 0.4, "semantic": 0.6, "graph": 0.3}
    )
    # graph did not run: weights 0.4 / 0.6 stay as they are (sum 1)
    assert combined["a"] == 0.4 * 1.0 + 0.6 * 0.0
    assert combined["b"] == 0.4 * 0.5 + 0.6 * 1.0
    assert normalized["keyword"]["c"] == 0.0
    only_kw, _ = weighted_fusion(
        {"keyword": rankings["keyword"]}, {"keyword": 0.35, "semantic": 0.65}
    )
    assert only_kw["a"] == 1.0


def test_rrf_fusion_orders_by_reciprocal_rank_and_normalizes():
    rankings = {"keyword": [("a", 9.0), ("b", 1.0)], "semantic": [("b", 0.9), ("c", 0.8)]}
    combined, _ = rrf_fusion(rankings, {"keyword": 0.5, "semantic": 0.5}, k=60)
    assert max(combined, key=combined.get) == "b"
    assert all(0 <= v <= 1 for v in combined.values())
    raw, _ = rrf_fusion(rankings, {"keyword": 0.5, "semantic": 0.5}, k=60, normalize=False)
    assert raw["a"] == 0.5 / 61
