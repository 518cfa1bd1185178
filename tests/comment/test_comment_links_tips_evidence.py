"""Review fixes of the public comment: no cross-repo backlinks, ``$`` escaped, one definition of
"resolved", tips that agree with the verdict, and evidence that explains instead of listing versions."""
from __future__ import annotations

import re

import pytest

from support.comment import COLOSSAL, OWN_REPO, make_triage, prediction, similar
from triagebot.comment import plain as comment_text
from triagebot.comment import render as comment
from triagebot.comment import sections as comment_parts
from triagebot.domain import models
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.text import sanitize

OTHERS = ("pytorch/pytorch", "horovod/horovod", COLOSSAL, "NVIDIA/Megatron-LM")
ALLOWED = frozenset({OWN_REPO, *OTHERS})
GITHUB_THREAD = re.compile(r"https://github\.com/([^/\s)]+/[^/\s)]+)/(?:issues|pull|discussions)/")
NOT_FIXED = [
    "", "   ", "unresolved", "Unresolved in the excerpt", "unresolved (closed as stale)",
    "No real answer; the only replies point to the docs.", "No answer from maintainers",
    "no resolution given", "Unknown", "N/A", "Not resolved before the issue was closed",
    "A maintainer suggested strict=False, but the reporter said that did not work and the thread "
    "ends without a fix.",
    "The reporter mentions a workaround written up in an external blog post, but its content is not "
    "in the thread.",
    "No confirmed fix; maintainers suggested reducing activation memory.",
]


def _mixed_similar():
    hits = [similar(11, score=0.9), similar(12, resolved=False, resolution="unresolved", score=0.5)]
    hits += [similar(20 + i, repo=repo, score=0.8 - i / 100) for i, repo in enumerate(OTHERS)]
    hits.append(similar(30, repo="pytorch/pytorch", resolved=False, resolution="unresolved", score=0.4))
    return hits


# --- 1. cross references -----------------------------------------------------------------------

@pytest.mark.parametrize("own", [OWN_REPO, "microsoft/deepspeed", "", "pytorch/pytorch"])
def test_no_github_issue_link_to_another_repository(own):
    triage = make_triage(repo=own, similar=_mixed_similar())
    body = comment.render(triage, allowed_repos=ALLOWED)
    linked = GITHUB_THREAD.findall(body)
    assert all(repo.lower() == own.lower() for repo in linked), linked
    assert "https://redirect.github.com/" in body


def test_own_repository_keeps_canonical_links_others_use_the_redirect_host():
    hits = [similar(11, score=0.9), similar(12, resolved=False, resolution="unresolved", score=0.85),
            similar(20, repo="pytorch/pytorch"), similar(21, repo="horovod/horovod", score=0.7),
            similar(30, repo="pytorch/pytorch", resolved=False, resolution="unresolved", score=0.6)]
    # at most three links per comment (#11): the five are shown by two comments
    body = "".join(comment.render(make_triage(similar=part), allowed_repos=ALLOWED)
                   for part in (hits[:3], hits[3:]))
    assert f"[#11](https://github.com/{OWN_REPO}/issues/11)" in body
    assert f"(https://github.com/{OWN_REPO}/issues/12)" in body  # in the details block
    assert "[#20](https://redirect.github.com/pytorch/pytorch/issues/20) (PyTorch)" in body
    assert "[#21](https://redirect.github.com/horovod/horovod/issues/21) (Horovod)" in body
    assert "(https://redirect.github.com/pytorch/pytorch/issues/30)" in body


def test_repository_not_allowed_is_still_not_linked():
    body = comment.render(make_triage(similar=[similar(5, repo="evil/repo")]))
    assert "evil/repo" not in body and "- issue 5 (repo)" in body


def test_reference_url():
    assert sanitize.reference_url("a/b", 3, "a/b") == "https://github.com/a/b/issues/3"
    assert sanitize.reference_url("A/B", 3, "a/b") == "https://github.com/A/B/issues/3"
    assert sanitize.reference_url("c/d", 3, "a/b") == "https://redirect.github.com/c/d/issues/3"
    assert sanitize.reference_url("c/d", 3, "") == "https://redirect.github.com/c/d/issues/3"
    assert sanitize.reference_url("c/d)](x", 3, "a/b") is None


@pytest.mark.parametrize(("url", "ok"), [
    ("https://github.com/a/b/issues/1", True),
    ("https://github.com/A/B/pull/1", True),
    ("https://github.com/c/d/issues/1", False),
    ("https://github.com/c/d/pull/1", False),
    ("https://github.com/c/d/discussions/1", False),
    ("https://github.com/c/d/blob/main/README.md", True),  # files write no cross-reference
    ("https://redirect.github.com/c/d/issues/1", True),
    ("https://redirect.github.com/evil/x/issues/1", False),
    ("https://redirect.github.com/c/d/issues/1?x=1", False),
    ("https://redirect.github.com.evil.example/c/d/issues/1", False),
])
def test_allowed_link_with_own_repo(url, ok):
    assert sanitize.allowed_link(url, {"a/b", "c/d"}, own_repo="a/b") is ok


def test_allowed_link_without_own_repo_is_unchanged():
    assert sanitize.allowed_link("https://github.com/c/d/issues/1", {"a/b", "c/d"})


# --- 2. dollar signs -----------------------------------------------------------------------------

def test_dollar_is_escaped():
    assert sanitize.safe_inline("loss $x^{2}$ and $$y$$") == r"loss \$x^{2}\$ and \$\$y\$\$"


def test_dollar_in_titles_and_resolutions_cannot_render_math():
    hit = similar(7, title="grad $\\sqrt{x}$ explodes", resolution="Set $lr=1e-5$ and it trained.")
    body = comment.render(make_triage(similar=[hit]))
    outside_code = re.sub(r"`[^`\n]*`", "", body)
    assert re.findall(r"(?<!\\)\$", outside_code) == []
    assert r"grad \$\\sqrt{x}\$ explodes" in body and r"Set \$lr=1e-5\$" in body


# --- 3. one definition of "resolved" ------------------------------------------------------------

@pytest.mark.parametrize("text", NOT_FIXED)
def test_known_resolution_rejects_non_answers(text):
    assert not models.known_resolution(text)
    item = IndexedIssue(repo="a/b", number=1, labels=Labels(stage="S1"), resolution=text,
                        close_reason="completed")
    assert not item.resolved
    assert not similar(1, resolution=text).resolved


@pytest.mark.parametrize("text", ["Upgrading to torch 2.1 fixed it.", "Set NCCL_P2P_DISABLE=1.",
                                  "Resolved by pinning transformers 4.35.",
                                  "Closed without a fix upstream; pinning numpy<2 avoids it."])
def test_known_resolution_accepts_fixes(text):
    assert models.known_resolution(text)
    assert similar(1, resolution=text).resolved


@pytest.mark.parametrize("text", [t for t in NOT_FIXED if t.strip()])
def test_not_fixed_issues_are_not_listed_as_fixed(text):
    hits = [similar(1, resolution="Enabled CPU offload."), similar(2, resolution=text, title="Other OOM")]
    body = comment.render(make_triage(similar=hits))
    main, details = body.split("<details>")
    assert "#2" not in main and "issues/2) Other OOM" in details
    resolved, unresolved = comment_parts.split_similar(hits)
    assert [s.number for s in resolved] == [1] and [s.number for s in unresolved] == [2]


# --- 4. tips agree with the verdict -------------------------------------------------------------

def test_confident_question_gets_no_debugging_tips():
    """#11: advice only on grounds; a generic "read the docs" for a question is not advice."""
    triage = make_triage(is_bug=prediction("no", 0.9))
    body = comment.render(triage)
    assert comment_parts.tips(triage) == []
    assert comment.TIPS_HEADING not in body and "micro batch" not in body
    assert comment_parts.NOT_A_BUG_NOTE in body
    assert "What to try first" not in comment_text.render_text(triage)


def test_unsure_is_bug_keeps_the_tips():
    triage = make_triage(is_bug=prediction("no", 0.5, abstained=True))
    assert any("micro batch" in t for t in comment_parts.tips(triage))


def test_tips_need_a_stated_fix_pattern():
    """#11: the engine's calibrated threshold decides what is stated; advice follows it, with no
    second confidence floor of its own."""
    assert comment_parts.tips(make_triage(fix_pattern=prediction("F5", 0.9, abstained=True))) == []
    assert comment_parts.tips(make_triage(fix_pattern=prediction("F5", 0.2)))
    body = comment.render(make_triage(fix_pattern=prediction("F5", 0.9, abstained=True)))
    assert comment.TIPS_HEADING not in body


# --- 5. facts as prose --------------------------------------------------------------------------

def test_environment_facts_render_as_prose_once():
    fact = "PyTorch was built with CUDA 11.8, but nvcc reports CUDA 12.1"
    triage = make_triage(
        stage=prediction("S1", 0.9, facts=[fact], evidence=["RuntimeError: Error building extension"]),
        symptom=prediction("1.1", 0.9, facts=[fact]),
        root_cause=prediction("R1.1", 0.8, facts=[fact]),
        fix_pattern=prediction("F2", 0.8, facts=[fact]), similar=[])
    lines = comment_parts.evidence_lines(triage)
    assert lines[0] == ("- Stage: PyTorch was built with CUDA 11.8, but nvcc reports CUDA 12.1; "
                        "`RuntimeError: Error building extension`")
    assert sum(fact in line for line in lines) == 1 and f"`{fact}`" not in "\n".join(lines)
    assert fact in comment_text.render_text(triage)
