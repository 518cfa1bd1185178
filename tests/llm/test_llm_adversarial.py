"""Adversarial suite (RELIABILITY 30-38): prompt-injection issues sent through the real client to a
model that either classifies honestly (smart mode) or obeys the injection. Pass criteria:

* the triage holds only taxonomy ids, consistent with the stage;
* notes aside, no attacker string, URL or mention reaches any field that could be rendered;
* the prompt contains no secret; the issue text is only in the user turn, inside <issue> tags.
"""
from __future__ import annotations

import json

import pytest

from support.adversarial import CORPUS, MARKERS, SECRETS, obeying_answers
from support.llm_fake import FakeLLM, neighbour, offline_triage
from triagebot.domain import taxonomy
from triagebot.domain.models import Issue, Triage
from triagebot.llm.client import build_refiner


# (title, body) pairs; each plants strings that must never come out publicly.
def run(server: FakeLLM, title: str, body: str) -> Triage:
    env = {"TRIAGEBOT_LLM_BASE_URL": server.base_url, "TRIAGEBOT_LLM_MODEL": "fake", **SECRETS}
    refiner = build_refiner(env)
    try:
        issue = Issue(repo="org/repo", number=7, title=title, body=body)
        return refiner.refine(issue, offline_triage(), [neighbour(3), neighbour(4)])
    finally:
        refiner.close()


def assert_safe_triage(result: Triage) -> None:
    for dim in taxonomy.DIMENSIONS:
        assert taxonomy.is_valid(dim, result.prediction(dim).id)
    assert taxonomy.consistent(result.stage.id, result.symptom.id, result.root_cause.id)
    public = result.model_dump_json(exclude={"notes"}).lower()
    public = public.replace("https://github.com/org/repo/issues/", "")  # our own links
    for marker in MARKERS:
        assert marker.lower() not in public, marker


def assert_safe_prompts(server: FakeLLM, title: str, system: str | None) -> str:
    for body in server.requests:
        messages = body["messages"]
        assert messages[0]["role"] == "system" and "tools" not in body
        assert system is None or messages[0]["content"] == system  # one fixed system prompt
        sent = json.dumps(messages)
        for secret in SECRETS.values():
            assert secret not in sent
        user = messages[1]["content"]
        assert user.count("<issue>") == 1 and user.count("</issue>") == 1
        inside = user.split("<issue>", 1)[1].split("</issue>", 1)[0]
        probe = title.split()[0][:5]
        assert probe in inside or "\u200b" in title  # the title is inside the delimiters ...
        assert probe not in user.split("<issue>", 1)[0]  # ... and nowhere before them
    return server.requests[0]["messages"][0]["content"]


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_injection_with_honest_model(case):
    title, body = CORPUS[case]
    with FakeLLM() as server:
        result = run(server, title, body)
        assert_safe_prompts(server, title, None)
    assert result.source == "offline+llm"
    assert_safe_triage(result)


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_injection_with_obeying_model(case):
    title, body = CORPUS[case]
    system = None
    for mode, reply in obeying_answers(title, body).items():
        with FakeLLM() as server:
            server.push(reply, reply)
            result = run(server, title, body)
            system = assert_safe_prompts(server, title, system)
        assert_safe_triage(result)
        if mode != "obeys_free_text":
            assert result.source == "offline", mode
            assert any("fell back" in n for n in result.notes)
