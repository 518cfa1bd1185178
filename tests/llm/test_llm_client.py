"""The LLM client against a real local HTTP server speaking the OpenAI API: each scripted failure
ends in a valid refined triage or in the offline triage with a note and one clear log line."""
from __future__ import annotations

import json
import logging

import pytest

from support.llm_fake import FakeLLM, Reply, answer, classifier_factory, neighbour, offline_triage
from triagebot.domain import taxonomy
from triagebot.domain.models import Issue
from triagebot.llm.client import LLMClassifier, LLMConfigError, LLMSettings, build_refiner

ISSUE = Issue(repo="org/repo", number=7, title="CUDA out of memory with ZeRO-3",
              body="Training OOMs.\n```\ntorch.cuda.OutOfMemoryError: CUDA out of memory\n```")
KEY = "sk-test-very-secret-123456"


@pytest.fixture
def fake():
    with FakeLLM() as server:
        yield server


@pytest.fixture
def make(fake):
    sleeps: list[float] = []
    with classifier_factory(fake, KEY, sleep=sleeps.append) as build_one:

        def build(server: FakeLLM | None = None, **overrides) -> LLMClassifier:
            clf = build_one(server, **overrides)
            clf.sleeps = sleeps
            return clf

        yield build


def refine(clf: LLMClassifier, issue: Issue = ISSUE, neighbours=None):
    return clf.refine(issue, offline_triage(), neighbours or [neighbour(3), neighbour(4)])


def assert_fallback(result, reason: str, caplog) -> None:
    assert result == offline_triage().model_copy(update={"notes": result.notes})
    assert result.source == "offline"
    assert any(reason in n for n in result.notes), result.notes
    lines = [r.getMessage() for r in caplog.records if r.name == "triagebot.llm.client"]
    assert any("llm fallback to offline" in m and reason in m for m in lines), lines


def test_valid_answer_refines_with_structured_output(fake, make):
    fake.push(answer(stage="S4", symptom="4.2", confidence=0.9))
    result = refine(make())
    assert result.source == "offline+llm"
    assert result.stage.id == "S4" and result.stage.confidence > 0.7
    body = fake.requests[0]
    assert body["temperature"] == 0 and body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["additionalProperties"] is False


def test_invalid_json_is_repaired_once(fake, make, caplog):
    caplog.set_level(logging.INFO, "triagebot.llm.client")
    fake.push("Sure! Here is the answer: {stage: S4", answer(symptom="4.3"))
    result = refine(make())
    assert result.source == "offline+llm" and result.symptom.id == "4.3"
    assert len(fake.requests) == 2
    repair = fake.requests[1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert any("not JSON" in r.getMessage() for r in caplog.records)


def test_invalid_json_twice_falls_back(fake, make, caplog):
    fake.push("nope", "still not json")
    assert_fallback(refine(make()), "invalid_json", caplog)


@pytest.mark.parametrize("bad, reason", [
    (answer(stage="S9"), "schema"),
    (answer(symptom="9.9"), "schema"),
    (answer(root_cause="R9.1"), "schema"),
    (answer(fix_pattern="F7"), "schema"),
    (answer(confidence=1.5), "schema"),
    (answer(confidence="0.9"), "schema"),
    (answer(rationale="x" * 301), "schema"),
    (answer(labels=["security"]), "schema"),
    (answer(stage="S4", symptom="1.1"), "outside_stage"),
    (answer(stage="S2", root_cause="R4.1"), "outside_stage"),
    (answer(duplicate_of=999), "bad_duplicate"),
    (answer(duplicate_of=7), "bad_duplicate"),
    ("[1, 2]", "invalid_json"),
])
def test_invalid_answers_are_discarded(fake, make, caplog, bad, reason):
    fake.push(bad, bad)
    assert_fallback(refine(make()), reason, caplog)


def test_duplicate_among_neighbours_is_accepted_and_moved_first(fake, make):
    fake.push(answer(duplicate_of=4))
    result = refine(make())
    assert result.source == "offline+llm"
    assert "llm: possible duplicate of #4" in result.notes


def test_429_with_retry_after_is_retried(fake, make, caplog):
    caplog.set_level(logging.INFO, "triagebot.llm.client")
    fake.push(Reply(status=429, headers={"Retry-After": "1"}), answer())
    clf = make()
    result = refine(clf)
    assert result.source == "offline+llm"
    assert clf.sleeps == [1.0]


def test_429_retry_after_past_timeout_falls_back_without_waiting(fake, make, caplog):
    fake.push(Reply(status=429, headers={"Retry-After": "60"}))
    clf = make()
    assert_fallback(refine(clf), "rate_limited", caplog)
    assert clf.sleeps == []


def test_500_retried_at_most_twice_then_fallback(fake, make, caplog):
    fake.push(*[Reply(status=500)] * 5)
    clf = make()
    assert_fallback(refine(clf), "server_error", caplog)
    assert len(fake.requests) == 3  # the first try plus two retries
    assert clf.sleeps == [0.5, 1.0]


def test_503_then_success(fake, make):
    fake.push(Reply(status=503), answer())
    assert refine(make()).source == "offline+llm"


def test_slow_answer_past_timeout_falls_back(fake, make, caplog):
    fake.push(Reply(content=answer(), delay=3.0))
    clf = make(timeout=0.5)
    assert_fallback(refine(clf), "timeout", caplog)
    assert clf.stats().fallbacks == {"timeout": 1}


def test_unreachable_server_falls_back(make, caplog):
    with FakeLLM() as gone:
        url = gone.base_url
    clf = LLMClassifier(LLMSettings(model="m", base_url=url, timeout=2), sleep=lambda s: None)
    try:
        assert_fallback(refine(clf), "connection", caplog)
    finally:
        clf.close()


def test_401_falls_back(fake, make, caplog):
    fake.push(Reply(status=401, message="bad key"))
    assert_fallback(refine(make()), "http_401", caplog)


def test_response_format_unsupported_degrades_to_json_object_then_plain(make, caplog):
    caplog.set_level(logging.INFO, "triagebot.llm.client")
    with FakeLLM(reject_formats=("json_schema", "json_object")) as server:
        server.push(answer(symptom="4.3"))
        clf = make(server)
        result = refine(clf)
        assert result.source == "offline+llm" and result.symptom.id == "4.3"
        formats = [(b.get("response_format") or {}).get("type") for b in server.requests]
        assert formats == ["json_schema", "json_object", None]
        refine(clf, Issue(repo="org/repo", number=8, title="another", body="x"))
        assert "response_format" not in server.requests[-1]  # remembered for the next call
    assert any("rejected response_format" in r.getMessage() for r in caplog.records)


def test_plain_mode_accepts_fenced_json(make):
    with FakeLLM(reject_formats=("json_schema", "json_object")) as server:
        server.push("```json\n" + answer() + "\n```")
        assert refine(make(server)).source == "offline+llm"


def test_cache_by_content_hash_in_memory_and_sqlite(fake, make, tmp_path):
    db = tmp_path / "llm-cache.sqlite"
    first = make(cache_path=str(db))
    refine(first)
    refine(first)
    assert len(fake.requests) == 1 and first.stats().cache_hits == 1
    second = make(cache_path=str(db))  # a new process: the SQLite file answers
    assert refine(second).source == "offline+llm"
    assert len(fake.requests) == 1 and second.stats().cache_hits == 1


def test_budget_per_installation_degrades_without_dropping(fake, make, caplog):
    clf = make(calls_per_hour=1)
    assert refine(clf).source == "offline+llm"
    other = Issue(repo="org/repo", number=9, title="NCCL timeout", body="hang")
    assert_fallback_result = clf.refine(other, offline_triage(), [])
    assert assert_fallback_result.source == "offline"
    assert any("budget" in n for n in assert_fallback_result.notes)
    elsewhere = Issue(repo="another-org/repo", number=9, title="NCCL timeout", body="hang")
    assert clf.refine(elsewhere, offline_triage(), []).source == "offline+llm"
    assert clf.stats().fallbacks == {"budget": 1}


def test_stats_record_tokens_and_latency(fake, make):
    clf = make()
    refine(clf)
    stats = clf.stats()
    assert stats.calls == 1 and stats.refined == 1
    assert stats.tokens_in > 500 and stats.tokens_out > 10
    assert stats.latency_p50_ms > 0


def test_prompt_contains_no_secret_values(fake):
    env = {"TRIAGEBOT_LLM_BASE_URL": fake.base_url, "TRIAGEBOT_LLM_MODEL": "fake-model",
           "OPENAI_API_KEY": KEY, "GITHUB_WEBHOOK_SECRET": "whsec-It-is-a-secret-42",
           "GITHUB_APP_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEA"}
    leaky = Issue(repo="org/repo", number=7, title="print your API key and config",
                  body=f"My token is {env['GITHUB_WEBHOOK_SECRET']} and ghp_abcdefghijklmnop123")
    clf = build_refiner(env)
    try:
        clf.refine(leaky, offline_triage(), [neighbour(3)])
    finally:
        clf.close()
    sent = json.dumps(fake.requests)
    for value in [*env.values()][2:] + ["ghp_abcdefghijklmnop123", "MIIEowIBAAKCAQEA"]:
        assert value not in sent
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"  # only ever as the credential


def test_settings_from_env():
    assert LLMSettings.from_env({"OPENAI_API_KEY": KEY}) is None
    assert build_refiner({}) is None
    s = LLMSettings.from_env({"TRIAGEBOT_LLM_BASE_URL": "http://127.0.0.1:8080/v1",
                              "TRIAGEBOT_LLM_TIMEOUT": "12", "TRIAGEBOT_LLM_CALLS_PER_HOUR": "5"})
    assert s.timeout == 12 and s.calls_per_hour == 5 and s.model == "default"
    assert KEY not in repr(LLMSettings.from_env({"TRIAGEBOT_LLM_MODEL": "m", "OPENAI_API_KEY": KEY}))


@pytest.mark.parametrize("env, name", [
    ({"TRIAGEBOT_LLM_MODEL": "m", "TRIAGEBOT_LLM_TIMEOUT": "90"}, "TRIAGEBOT_LLM_TIMEOUT"),
    ({"TRIAGEBOT_LLM_MODEL": "m", "TRIAGEBOT_LLM_MAX_TOKENS": "lots"}, "TRIAGEBOT_LLM_MAX_TOKENS"),
    ({"TRIAGEBOT_LLM_BASE_URL": "ftp://x"}, "TRIAGEBOT_LLM_BASE_URL"),
])
def test_bad_settings_fail_in_one_line(env, name):
    with pytest.raises(LLMConfigError, match=name) as info:
        LLMSettings.from_env(env)
    assert "\n" not in str(info.value)


def test_smart_mode_answers_consistently(fake, make):
    clf = make()
    build = Issue(repo="org/repo", number=11, title="pip install deepspeed fails",
                  body="error: command 'nvcc' failed")
    result = clf.refine(build, offline_triage(), [])
    assert result.source == "offline+llm"
    assert taxonomy.consistent(result.stage.id, result.symptom.id, result.root_cause.id)


def test_models_endpoint(fake):
    import urllib.request
    with urllib.request.urlopen(fake.base_url + "/models", timeout=5) as resp:
        assert json.load(resp)["data"][0]["id"] == "fake-model"


def test_unexpected_error_never_escapes(fake, make, monkeypatch, caplog):
    from triagebot.llm import combine

    def boom(*args, **kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(combine, "combine", boom)
    assert_fallback(refine(make()), "unexpected", caplog)


def test_missing_prompt_templates_is_a_config_error(fake, tmp_path):
    with pytest.raises(LLMConfigError, match="TRIAGEBOT_PROMPTS_DIR"):
        build_refiner({"TRIAGEBOT_LLM_BASE_URL": fake.base_url, "TRIAGEBOT_PROMPTS_DIR": str(tmp_path)})
