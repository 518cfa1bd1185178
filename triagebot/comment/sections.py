"""The pieces of the triage comment, one function per section. Pure.

Kept apart from ``comment.py`` (which assembles, sizes and scans) so each piece stays small. Label
names always come from ``taxonomy``; anything else passes through ``sanitize`` first.
"""
from __future__ import annotations

from triagebot.domain import taxonomy
from triagebot.domain.models import Prediction, Similar, Triage
from triagebot.domain.signatures import error_signature
from triagebot.text import sanitize

MAX_SIMILAR = 5
MAX_TIPS = 4
MAX_MISSING = 8
MAX_EVIDENCE = 3
MAX_ALTERNATIVES = 3
RESOLUTION_CHARS = 200
TITLE_CHARS = 100
# Advice is only drawn from labels the bot is reasonably sure of: a wrong tip sends the reporter
# down the wrong path, which costs more than no tip.
TIP_MIN_CONFIDENCE = 0.4
# Whose advice comes first: a cause says most about what to do, a fix pattern least. A priority of
# the comment, not the taxonomy's list of dimensions (that is taxonomy.AFTER_STAGE).
TIP_ORDER = ("root_cause", "symptom", "fix_pattern")

DETAILS_SUMMARY = "Alternatives, related issues and details"
# Said once under "Why I think so" when it quotes the report: the quotes are the report's words.
QUOTES_NOTE = "_Lines in `code` are quoted from the report: the report says them, not the bot._"
ALTERNATIVES_HEADING = "**Other candidates**"
RELATED_HEADING = "**Related, no known fix**"
ENVIRONMENT_HEADING = "**Detected environment**"
UNSURE = "unsure"
UNSURE_STAGE = "I am unsure which stage this belongs to; a maintainer will take a look."
NOT_A_BUG_NOTE = (
    "This reads more like a question, a feature request or a usage issue than a framework bug."
)
QUESTION_TIP = (
    "Start with the similar issues listed here and the framework's documentation; debugging steps "
    "for bugs do not apply to a usage question."
)

# Display names of the frameworks, so a cross-repo match reads "(Colossal-AI)".
FRAMEWORKS = {
    "microsoft/deepspeed": "DeepSpeed",
    "deepspeedai/deepspeed": "DeepSpeed",
    "hpcaitech/colossalai": "Colossal-AI",
    "nvidia/megatron-lm": "Megatron-LM",
    "pytorch/pytorch": "PyTorch",
    "horovod/horovod": "Horovod",
}
_YES = {"yes", "true", "1", "y"}
_NO = {"no", "false", "0", "n"}
_DIM_LABELS = {
    "stage": "Stage",
    "symptom": "Symptom",
    "root_cause": "Root cause",
    "fix_pattern": "Fix pattern",
}


def choice(triage: Triage, dimension: str) -> str | None:
    """The predicted id when it is a real taxonomy id and not abstained, else None."""
    pred = triage.prediction(dimension)
    if pred.abstained or pred.id == taxonomy.UNKNOWN or taxonomy.label(dimension, pred.id) is None:
        return None
    return pred.id


def pct(confidence: float) -> str:
    return f"{round(confidence * 100)}%"


def flag(triage: Triage, dimension: str) -> bool | None:
    """A yes/no prediction (``distributed_specific``, ``is_bug``) or None when abstained/unclear."""
    pred = triage.prediction(dimension)
    value = pred.id.strip().lower()
    if pred.abstained or value not in _YES | _NO:
        return None
    return value in _YES


def _named(triage: Triage, dimension: str) -> str:
    label_id = choice(triage, dimension)
    if label_id is None:
        return UNSURE
    conf = pct(triage.prediction(dimension).confidence)
    return f"{taxonomy.name(dimension, label_id)} (`{label_id}`, {conf})"


def summary_lines(triage: Triage) -> list[str]:
    """The one-line answer, then root cause, fix pattern and the distributed/bug flags."""
    lines = [_headline(triage), "", f"**Root cause:** {_named(triage, 'root_cause')}  ",
             f"**Fix pattern:** {_named(triage, 'fix_pattern')}  "]
    distributed = flag(triage, "distributed_specific")
    conf = pct(triage.distributed_specific.confidence)
    shown = UNSURE if distributed is None else f"{'yes' if distributed else 'no'} ({conf})"
    lines.append(f"**Distributed-specific:** {shown}")
    if flag(triage, "is_bug") is False:
        lines += ["", NOT_A_BUG_NOTE]
    return lines


def _headline(triage: Triage) -> str:
    """"Likely **stage** → **symptom** (72% confident)", or says what is unsure."""
    stage, symptom = choice(triage, "stage"), choice(triage, "symptom")
    if stage is None:
        return UNSURE_STAGE
    stage_name = taxonomy.name("stage", stage)
    if symptom is None or taxonomy.stage_of("symptom", symptom) != stage:
        return f"Likely **{stage_name}**; the exact symptom is unsure."
    conf = pct(triage.symptom.confidence)
    return f"Likely **{stage_name}** → **{taxonomy.name('symptom', symptom)}** ({conf} confident)."


def tips(triage: Triage, markdown: bool = True) -> list[str]:
    """Advice from ``taxonomy.FIX_ADVICE`` for the confident root cause, symptom and fix pattern.

    A confident "not a bug" (``is_bug`` no, not abstained) gets no debugging advice, which would
    contradict the verdict, only a pointer to the similar issues and the docs."""
    if flag(triage, "is_bug") is False:
        return [QUESTION_TIP]
    advice: dict[str, list[str]] = getattr(taxonomy, "FIX_ADVICE", {})
    picked: list[str] = []
    for dimension in TIP_ORDER:
        label_id = choice(triage, dimension)
        sure = triage.prediction(dimension).confidence >= TIP_MIN_CONFIDENCE
        found = advice.get(label_id, []) if label_id and sure else []
        picked += [tip for tip in found if tip not in picked]
    picked = picked[:MAX_TIPS]
    return [_tip_markdown(t) if markdown else sanitize.plain(t, 300) for t in picked]


def _tip_markdown(text: str) -> str:
    """Advice is our own text but may quote commands in backticks: keep those as code spans."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # unbalanced backticks: treat it all as prose
        return sanitize.safe_inline(text, 300)
    out = []
    for i, part in enumerate(parts):
        piece = sanitize.safe_code(part, 80) if i % 2 else sanitize.safe_inline(part, 300)
        lead = " " if part[:1].isspace() and i % 2 == 0 else ""
        trail = " " if part[-1:].isspace() and i % 2 == 0 else ""
        out.append(lead + piece + trail if piece else lead)
    return "".join(out).strip()


def split_similar(similar: list[Similar]) -> tuple[list[Similar], list[Similar]]:
    """The best ``MAX_SIMILAR`` distinct neighbours, split into resolved and unresolved.
    ``Similar.resolved`` already requires a resolution that says how it was fixed
    (``models.known_resolution``)."""
    best: dict[tuple[str, int], Similar] = {}
    for hit in sorted(similar, key=lambda s: -s.score):
        best.setdefault((hit.repo.lower(), hit.number), hit)
    top = list(best.values())[:MAX_SIMILAR]
    fixed = [s for s in top if s.resolved]
    return fixed, [s for s in top if s not in fixed]


def similar_line(similar: Similar, own_repo: str, allowed: frozenset[str], with_resolution: bool) -> str:
    """``- [#123](url) (Colossal-AI) title — resolution``; the URL is built here, never echoed.
    Issues of other repositories are linked through GitHub's redirect host, so the comment does
    not write "mentioned this issue" on their timelines (``sanitize.reference_url``)."""
    url = sanitize.reference_url(similar.repo, similar.number, own_repo)
    if url and sanitize.allowed_link(url, allowed, own_repo=own_repo):
        ref = f"[#{similar.number}]({url})"
    else:
        ref = f"issue {similar.number}"  # no "#": an unlinked reference must not autolink either
    line = f"- {ref}{_origin(similar, own_repo)} {sanitize.safe_inline(similar.title, TITLE_CHARS)}"
    if with_resolution:
        line += f" — {sanitize.safe_inline(similar.resolution, RESOLUTION_CHARS)}"
    return line


def _origin(similar: Similar, own_repo: str) -> str:
    if not similar.cross_repo and similar.repo.lower() == own_repo.lower():
        return ""  # the issue's own repository needs no marker
    name = FRAMEWORKS.get(similar.repo.lower()) or similar.repo.rsplit("/", 1)[-1]
    return f" ({sanitize.safe_inline(name, 40)})"


def missing_lines(triage: Triage) -> list[str]:
    return [f"- [ ] {sanitize.safe_inline(m.description, 160)}" for m in triage.missing_info[:MAX_MISSING]]


def evidence_lines(triage: Triage) -> list[str]:
    """Per confident label, facts about the environment (prose), the snippets of the report that
    point to it (inline code) and how many of the similar issues shown carry the same label, so
    maintainers can see why."""
    lines, seen = [], set()
    for dimension, title in _DIM_LABELS.items():
        pred = triage.prediction(dimension)
        facts = [f for f in pred.facts[:MAX_EVIDENCE] if f not in seen]
        snippets = [q for q in quotable(pred)[:MAX_EVIDENCE] if q not in seen]
        seen.update(facts + snippets)  # said once, not repeated under the next label
        agree = _neighbour_agreement(triage, dimension)
        if choice(triage, dimension) and (facts or snippets or agree):
            prose = "; ".join(sanitize.safe_inline(f, 160) for f in facts)
            quoted = ", ".join(sanitize.safe_code(s, 100) for s in snippets)
            lines.append(f"- {title}: " + "; ".join(p for p in (prose, quoted, agree) if p))
    return lines


def quotable(pred: Prediction) -> list[str]:
    """Evidence lines that may be quoted: inert (no links, mentions, references, instructions)
    and shaped like an error message (``signatures.error_signature``), never a line that only
    mentions a topic - such as a title saying "official fix: pip install ..."."""
    return [q for q in pred.evidence if sanitize.inert_quote(q) and error_signature(q)]


def quotes_report(triage: Triage) -> bool:
    """Does the evidence section quote the report (so it needs ``QUOTES_NOTE``)?"""
    return any(choice(triage, d) and quotable(triage.prediction(d)) for d in _DIM_LABELS)


def _neighbour_agreement(triage: Triage, dimension: str) -> str:
    """"3 of 5 similar issues agree" when at least two neighbours share the predicted id."""
    if dimension not in taxonomy.DIMENSIONS or not triage.similar:
        return ""
    label_id = triage.prediction(dimension).id
    same = sum(getattr(s.labels, dimension) == label_id for s in triage.similar)
    return f"{same} of {len(triage.similar)} similar issues agree" if same >= 2 else ""


def details_block(triage: Triage, related: list[Similar], allowed: frozenset[str]) -> str:
    """The collapsed rest: alternatives, unresolved neighbours, environment, how it was triaged."""
    parts = [_alternatives(triage), _related(triage, related, allowed), _environment(triage)]
    parts.append(f"Triaged {'with an LLM' if 'llm' in triage.source else 'offline'}.")
    body = "\n\n".join(p for p in parts if p)
    return f"<details>\n<summary>{DETAILS_SUMMARY}</summary>\n\n{body}\n\n</details>"


def _alternatives(triage: Triage) -> str:
    lines = []
    for dimension, title in _DIM_LABELS.items():
        shown = [
            f"{taxonomy.name(dimension, i)} (`{i}`, {pct(c)})" for i, c in _candidates(triage, dimension)
        ]
        if shown:
            lines.append(f"- {title}: " + "; ".join(shown))
    return f"{ALTERNATIVES_HEADING} (low confidence, not a conclusion)\n" + "\n".join(lines) if lines else ""


def _candidates(triage: Triage, dimension: str) -> list[tuple[str, float]]:
    """Runner-up ids; when the bot abstained its best guess is only a candidate, listed here."""
    pred = triage.prediction(dimension)
    chosen = choice(triage, dimension)
    options = ([] if chosen else [(pred.id, pred.confidence)]) + list(pred.alternatives)
    picked: list[tuple[str, float]] = []
    for label_id, conf in options:
        known = taxonomy.label(dimension, label_id) is not None
        if known and label_id != chosen and label_id not in (p[0] for p in picked):
            picked.append((label_id, conf))
    return picked[:MAX_ALTERNATIVES]


def _related(triage: Triage, related: list[Similar], allowed: frozenset[str]) -> str:
    lines = [similar_line(s, triage.repo, allowed, with_resolution=False) for s in related]
    return f"{RELATED_HEADING}\n" + "\n".join(lines) if lines else ""


def _environment(triage: Triage) -> str:
    values = triage.environment.model_dump(exclude_none=True)
    items = [f"{key} {sanitize.safe_code(str(value), 40)}" for key, value in list(values.items())[:13]]
    return f"{ENVIRONMENT_HEADING}: " + ", ".join(items) if items else ""
