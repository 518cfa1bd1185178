"""Cache, budget and statistics of the LLM path (fake clock, real SQLite file)."""
from __future__ import annotations

from triagebot.llm.store import AnswerCache, Budget, StatsRecorder, cache_key, percentile


def test_cache_key_covers_model_version_and_text():
    base = cache_key("m", "v1", "sys", "user")
    assert base == cache_key("m", "v1", "sys", "user")
    assert len({base, cache_key("m2", "v1", "sys", "user"), cache_key("m", "v2", "sys", "user"),
                cache_key("m", "v1", "sys", "user2"), cache_key("m", "v1", "sysu", "ser")}) == 5


def test_sqlite_cache_survives_reopen(tmp_path):
    path = tmp_path / "cache.sqlite"
    first = AnswerCache(path)
    first.put("k", '{"a": 1}')
    first.close()
    second = AnswerCache(path)
    assert second.get("k") == '{"a": 1}' and second.get("other") is None
    second.close()


def test_budget_sliding_hour_per_installation():
    now = [0.0]
    budget = Budget(2, clock=lambda: now[0])
    assert budget.take("a") and budget.take("a") and not budget.take("a")
    assert budget.take("b")
    now[0] = 3599.0
    assert not budget.take("a")
    now[0] = 3600.0
    assert budget.take("a")
    assert not Budget(0).take("a")


def test_stats_and_percentiles():
    rec = StatsRecorder()
    for ms in (10, 20, 30, 40, 1000):
        rec.call(ms / 1000, 100, 10)
    rec.fallback("timeout")
    rec.count("cache_hits")
    snap = rec.snapshot()
    assert (snap.calls, snap.tokens_in, snap.tokens_out, snap.cache_hits) == (5, 500, 50, 1)
    assert snap.latency_p50_ms == 30 and snap.latency_p99_ms == 1000
    assert snap.fallbacks == {"timeout": 1}
    assert percentile([], 50) == 0.0
