"""The rendered comment: structure, constants, size limits and fallbacks."""
from __future__ import annotations

import re

import pytest

from support.comment import COLOSSAL, make_triage, prediction, similar
from triagebot.comment import render as comment
from triagebot.comment import sections as comment_parts
from triagebot.domain.models import MissingInfo

ALLOWED = frozenset({COLOSSAL})


def test_structure_of_a_confident_triage():
    """#11: for the reporter the heading, fixes and requests (no "Likely", no percentages); the
    labels named with ids and confidences, evidence and the correction commands in the
    maintainers' block."""
    body = comment.render(make_triage(), allowed_repos=ALLOWED)
    assert body.startswith(comment.MARKER + "\n")
    assert body.count(comment.MARKER) == 1
    main, details = body.split("<details>")
    assert main.splitlines()[1] == comment.HEADING
    for name in ("Training & Evaluation", "Memory & offload", "Constrained resource", "Optimize memory"):
        assert name not in main
    assert "Likely" not in body and "%" not in main
    assert ("**Labels**: Training & Evaluation (`S4`, 91%), Memory & offload issue (`4.2`, 72%), "
            "Constrained resource and inefficient utilization (`R4.5`, 55%), Optimize memory, "
            "model, and data resources (`F5`, 48%), distributed yes 81%") in details
    assert "- Symptom: `torch.OutOfMemoryError: CUDA out of memory`" in details
    for constant in (comment.HEADING, comment.SIMILAR_HEADING, comment.MISSING_HEADING,
                     comment.FOOTER, comment_parts.DETAILS_SUMMARY):
        assert constant in body
    assert comment.FOOTER in details
    assert body.index(comment.SIMILAR_HEADING) < body.index(comment.MISSING_HEADING) < body.index("<details>")
    assert body.rstrip().endswith("</details>")
    assert len(body) <= comment.MAX_CHARS


def test_similar_issues_resolved_in_main_unresolved_in_details():
    body = comment.render(make_triage(), allowed_repos=ALLOWED)
    main, details = body.split("<details>")
    assert "[#101](https://github.com/microsoft/DeepSpeed/issues/101) ZeRO-3 OOM — Enabled CPU" in main
    assert "[#202](https://redirect.github.com/hpcaitech/ColossalAI/issues/202) (Colossal-AI)" in main
    assert "#303" not in main
    assert comment_parts.RELATED_HEADING in details and "issues/303) OOM at step 1" in details


def test_cross_repo_link_only_when_allowed():
    body = comment.render(make_triage())
    assert "hpcaitech/ColossalAI/issues" not in body
    assert "- issue 202 (Colossal-AI) ZeRO-3 OOM" in body


def test_stored_url_is_never_echoed():
    hit = similar(7).model_copy(update={"url": "https://evil.example/steal"})
    body = comment.render(make_triage(similar=[hit]))
    assert "evil.example" not in body
    assert "(https://github.com/microsoft/DeepSpeed/issues/7)" in body


def test_at_most_three_links_in_the_engines_order():
    """#11: the engine links 0-3 issues ranked by relevance; the comment keeps its order."""
    many = [similar(n, score=n / 100) for n in range(1, 20)]
    body = comment.render(make_triage(similar=many))
    numbers = [int(n) for n in re.findall(r"\[#(\d+)\]", body)]
    assert numbers == [1, 2, 3]
    body = comment.render(make_triage(similar=many[::-1]))
    assert [int(n) for n in re.findall(r"\[#(\d+)\]", body)] == [19, 18, 17]


def test_abstained_predictions_are_never_the_answer():
    triage = make_triage(
        symptom=prediction("4.2", 0.2, abstained=True),
        root_cause=prediction("R4.5", 0.1, abstained=True),
    )
    body = comment.render(triage)
    main = body.split("<details>")[0]
    assert "Symptom:" not in main and "Root cause:" not in main and "unsure" not in main
    assert "Memory & offload issue" not in main and "R4.5" not in main
    assert "offload_optimizer" not in main  # evidence of an abstained label is not shown
    details = body.split("<details>")[1]
    assert "Memory & offload issue (`4.2`, 20%)" in details
    assert comment_parts.HELD_BACK_HEADING in details
    assert "- root cause: Constrained resource and inefficient utilization (`R4.5`, 10%)" in details


def test_abstained_stage_and_unknown_ids():
    triage = make_triage(stage=prediction("S4", 0.3, abstained=True), fix_pattern=prediction("unknown", 0.9))
    main, details = comment.render(triage).split("<details>")
    assert "Stage:" not in main and "Fix:" not in main and "unknown" not in main.lower()
    assert "- stage: Training & Evaluation (`S4`, 30%)" in details


def test_symptom_outside_stage_is_not_claimed():
    main, details = comment.render(make_triage(symptom=prediction("5.2", 0.9))).split("<details>")
    assert "Symptom:" not in main and "Memory issue" not in main
    assert "- symptom: Memory issue (`5.2`, 90%)" in details


def test_not_a_bug_note():
    assert comment.NOT_A_BUG_NOTE in comment.render(make_triage(is_bug=prediction("no", 0.8)))
    assert comment.NOT_A_BUG_NOTE not in comment.render(make_triage(is_bug=prediction("no", 0.4, abstained=True)))


def test_fix_advice_comes_from_the_stated_fix_pattern_in_the_frameworks_terms():
    """#11: advice for the stated fix pattern (F5), in DeepSpeed's terms for a DeepSpeed issue."""
    body = comment.render(make_triage())
    assert comment.TIPS_HEADING in body
    tips_section = body.split(comment.TIPS_HEADING)[1].split("####")[0].split("<details>")[0]
    assert "`gradient_accumulation_steps`" in tips_section
    assert 1 <= tips_section.count("\n- ") <= 2


def test_no_tips_section_without_grounds():
    """No stated fix pattern and no linked resolved issue with one: no advice at all."""
    triage = make_triage(fix_pattern=prediction("F5", 0.48, abstained=True))
    assert comment.TIPS_HEADING not in comment.render(triage)


def test_missing_info_checklist():
    body = comment.render(make_triage())
    assert "- [ ] Output of ds\\_report\n- [ ] Your DeepSpeed config JSON" in body


def test_huge_triage_stays_under_limit():
    long = "x" * 5_000
    triage = make_triage(
        similar=[similar(n, title=long, resolution=long, resolved=n % 2 == 0) for n in range(1, 1001)],
        missing_info=[MissingInfo(key=str(n), description=long) for n in range(1000)],
        symptom=prediction("4.2", 0.7, evidence=[long] * 1000,
                           alternatives=[("4.3", 0.01)] * 1000),
        notes=[long] * 1000,
    )
    body = comment.render(triage, allowed_repos=ALLOWED)
    assert body.startswith(comment.MARKER) and len(body) <= 10_000
    assert comment.FOOTER in body


def test_size_limit_drops_details_then_similar_then_falls_back():
    full = comment.render(make_triage())
    no_details = comment.render(make_triage(), max_chars=full.index("<details>") + len(comment.FOOTER) + 10)
    assert "<details>" not in no_details and comment.SIMILAR_HEADING in no_details
    tighter = comment.render(make_triage(), max_chars=len(no_details) - 1)
    assert "<details>" not in tighter and comment.SIMILAR_HEADING not in tighter
    assert comment.FOOTER in tighter
    assert comment.render(make_triage(), max_chars=300) == comment.render_fallback(make_triage())


def test_fallback_is_ids_only():
    triage = make_triage(root_cause=prediction("R4.5", 0.1, abstained=True),
                         symptom=prediction("<img src=x>", 0.9))
    text = comment.render_fallback(triage)
    assert text.startswith(comment.MARKER)
    assert "stage `S4`, symptom unsure, root cause unsure, fix pattern `F5`." in text
    assert comment.FALLBACK_TOO_LONG in text and "<img" not in text


def test_configured_secret_withholds_the_comment():
    secret = "hunter2-webhook-secret-value"
    triage = make_triage(similar=[similar(5, title=f"leak {secret}")])
    body = comment.render(triage, secrets=[secret])
    assert secret not in body and comment.FALLBACK_WITHHELD in body
    assert body.startswith(comment.MARKER)


def test_render_text_is_plain():
    text = comment.render_text(make_triage(similar=[similar(9, title="bad \x1b[31mred\u202e")]))
    assert "Stage:        Training & Evaluation (S4), 91%" in text
    assert "https://github.com/microsoft/DeepSpeed/issues/9" in text
    assert "\x1b" not in text and "\u202e" not in text and "**" not in text and comment.MARKER not in text


def test_render_text_abstained():
    text = comment.render_text(make_triage(symptom=prediction("4.2", 0.2, abstained=True)))
    assert "Symptom:      unsure (best guess Memory & offload issue (4.2), 20%)" in text


@pytest.mark.parametrize("confidence,shown", [(0.0, "0%"), (0.456, "46%"), (1.0, "100%")])
def test_percent(confidence, shown):
    assert comment_parts.pct(confidence) == shown


def test_duplicates_and_empty_resolutions():
    hits = [similar(1, score=0.9), similar(1, score=0.5), similar(2, resolution="Unresolved ", score=0.4)]
    body = comment.render(make_triage(similar=hits))
    main, details = body.split("<details>")
    assert main.count("issues/1)") == 1
    assert "issues/2)" not in main and "issues/2)" in details


def test_render_is_deterministic():
    assert comment.render(make_triage()) == comment.render(make_triage())


def test_render_text_sections():
    text = comment.render_text(make_triage(notes=["LLM timed out"]))
    for title in ("Similar issues:", "Missing information:", "Evidence:", "Notes:"):
        assert f"\n{title}\n  - " in text
    assert "  - symptom: torch.OutOfMemoryError" in text and text.endswith("source: offline\n")


def test_evidence_cites_agreeing_neighbours_and_quotes_each_line_once() -> None:
    line = "torch.OutOfMemoryError: CUDA out of memory"
    triage = make_triage(
        stage=prediction("S4", 0.9, evidence=[line]),
        symptom=prediction("4.2", 0.8, evidence=[line]),
        similar=[similar(1), similar(2), similar(3)],
    )
    body = comment.render(triage)
    assert body.count(line) == 1
    assert "3 of 3 similar issues agree" in body


def test_related_issues_keep_their_titles_first_words_when_titles_are_shed():
    """Over the length budget, a related issue without a fix keeps the start of its title: a bare
    "#303" says nothing without hovering over it, which readers of the comments disliked."""
    long_title = "OOM at step 1 with ZeRO-3 and CPU offload of the optimizer states on 8 nodes"
    related = similar(303, resolved=False, resolution="unresolved", title=long_title, score=0.6)
    triage = make_triage(similar=[related])
    details = comment_parts.details_block(triage, [related], frozenset({"microsoft/DeepSpeed"}),
                                         frozenset({"related_titles"}))
    line = next(ln for ln in details.splitlines() if ln.startswith(comment_parts.RELATED_HEADING))
    assert "[#303](https://github.com/microsoft/DeepSpeed/issues/303) OOM at step 1 with" in line
    assert long_title not in line and len(line) < len(comment_parts.RELATED_HEADING) + 130
