"""The pieces of the triage comment, one function per section. Pure.

Kept apart from ``render`` (which assembles, sizes, scans and decides whether to post) so each
piece stays small. Label names always come from ``taxonomy``; anything else passes through
``sanitize`` first.

What the comment *states* is decided in one place, ``Triage.stated`` (read here through
``choice``/``flag``), which the backtest shares: a dimension the engine did not abstain on (its
calibrated precision threshold) and, for a symptom or root cause, one that sits in the stated
stage. Everything else appears only in the maintainers'
collapsed block as "not stated", with its confidence.
"""
from __future__ import annotations

from triagebot.comment import advice
from triagebot.domain import diagnoses, missing, taxonomy
from triagebot.domain.environment import framework_of
from triagebot.domain.models import FLAG_NO, FLAG_YES, MissingInfo, Prediction, Similar, Triage
from triagebot.domain.signatures import error_signature
from triagebot.text import sanitize

MAX_SIMILAR = 3  # the engine links 0-3 relevant issues; never more, whatever it hands over
MAX_MISSING = missing.MAX_ASKED
MISSING_CHARS = 200  # a whole request: the longest template is under it
MAX_EVIDENCE = 3
# evidence lines read for quotable ones, in the engine's order (``quotable``)
QUOTE_CANDIDATES = 20
MAX_ALTERNATIVES = 2
MIN_ALTERNATIVE = 0.15  # a runner-up under 15% tells a maintainer nothing
RESOLUTION_CHARS = 260  # a whole sentence: a fix cut in the middle reads as a different fix
TITLE_CHARS = 100  # whole titles; over the length budget related titles go first (render.SHED_ORDER)
# ... to this: readers found bare issue numbers useless (a title shows only on hover, not on a
# phone or in an e-mail), so a shed title keeps its first words.
SHORT_TITLE_CHARS = 48
# Quotes per label once a comment is over its length budget (``render.SHED_ORDER``).
QUOTES_PER_LABEL = 1

DETAILS_SUMMARY = "For maintainers"
LABELS_HEADING = "**Labels**"
EVIDENCE_HEADING = "**Why**"
# Said once under ``EVIDENCE_HEADING`` when it quotes the report: the quotes are the report's
# words, not the bot's (RELIABILITY 38).
QUOTES_NOTE = "_Lines in `code` are quoted from the report: the report says them, not the bot._"
HELD_BACK_HEADING = "**Not stated** (below the precision threshold)"
ALTERNATIVES_HEADING = "**Other candidates**"
RELATED_HEADING = "**Related, no known fix**"
# Resolved issues whose fix is not offered to the reporter (below the fixes' own bar): judged one
# by one, such fixes were another problem a third of the time, yet a maintainer who can tell in a
# glance saves the search.
RELATED_FIXED_HEADING = "**Related, with a fix not offered to the reporter**"
ENVIRONMENT_HEADING = "**Detected environment**"
HEADING = "**Automated triage**"
# "Not a bug" in the taxonomy's data covers questions, feature requests and changes to the
# framework's own code; calling a precise report that points at the faulty line "a usage issue"
# was read by maintainers as dismissive, so the note names all three.
NOT_A_BUG_NOTE = (
    "This reads like a question, a feature request or a change to the framework's own code "
    "rather than a failure of your setup."
)
# Placeholders, not ids: a fixed example ("`/triage stage S4`, `symptom 4.2`") under every
# comment was read by a maintainer as a suggested correction of this labels. (As long as
# the example was: comments near the length budget keep their maintainers' details.)
COMMANDS = (
    "Correct me with `/triage stage Sx`, `symptom x.y`, `cause Rx.y`, `fix Fx`, `distributed no` "
    "or `not-a-bug`; `/triage` re-runs."
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
_DIM_LABELS = {
    "stage": "Stage",
    "symptom": "Symptom",
    "root_cause": "Root cause",
    "fix_pattern": "Fix pattern",
}
_FLAG_LABELS = {"distributed_specific": "distributed-specific", "is_bug": "not a bug"}


# --- what the comment states ------------------------------------------------------------------

def choice(triage: Triage, dimension: str) -> str | None:
    """The id the comment states for a taxonomy dimension, or None (``Triage.stated``: the one
    definition the backtest shares)."""
    value = triage.stated(dimension)
    return value if isinstance(value, str) else None


# The labels that, stated, go on a silent issue (``comment.posting.worth_labelling``). Not the
# fix pattern alone: it is stated only inside a stated stage.
LABEL_DIMENSIONS = ("stage", "symptom", "root_cause")


def states_a_label(triage: Triage) -> bool:
    """Whether the triage states a stage, symptom or root cause (the labels worth applying)."""
    return any(choice(triage, dim) for dim in LABEL_DIMENSIONS)


def flag(triage: Triage, dimension: str) -> bool | None:
    """What the comment states of a flag (``distributed_specific``; of ``is_bug`` only False,
    "not a bug"), or None (``Triage.stated``)."""
    value = triage.stated(dimension)
    return value if isinstance(value, bool) else None


def framework(triage: Triage) -> str | None:
    """The framework whose tools the comment may name: the repository's, else the report's."""
    return framework_of(triage.repo) or triage.environment.framework


def pct(confidence: float) -> str:
    return f"{round(confidence * 100)}%"


# --- the reporter's block ---------------------------------------------------------------------

def summary_lines(triage: Triage) -> list[str]:
    """The heading, then the not-a-bug note when that is stated. The labels themselves are in
    the maintainers' block (``_labels``): named above the fold they told a reporter only what
    they had just written ("Stage: Training & Evaluation"), and were the wrong statement behind
    2 of the 3 zeros of maintainers' read M."""
    lines = [HEADING]
    if flag(triage, "is_bug") is False:
        lines += ["", NOT_A_BUG_NOTE]
    return lines


DIAGNOSIS_CHARS = 500  # a whole diagnosis: the longest template is under it


def diagnosis_texts(triage: Triage) -> list[str]:
    """What the report's own error says (``domain.diagnoses``), at most ``diagnoses.MAX_SHOWN``:
    always the table's template, by id (an id it does not know is skipped), never stored text."""
    texts: list[str] = []
    for diagnosed in triage.diagnoses:
        text = diagnoses.text_of(diagnosed)
        if text and text not in texts:
            texts.append(text)
    return texts[:diagnoses.MAX_SHOWN]


def diagnosis_lines(triage: Triage, markdown: bool = True) -> list[str]:
    """The diagnoses as Markdown (commands as code spans, as in the advice) or plain text."""
    return [_tip_markdown(t, DIAGNOSIS_CHARS) if markdown
            else sanitize.plain(t.replace("`", ""), DIAGNOSIS_CHARS)
            for t in diagnosis_texts(triage)]


def tips(triage: Triage, markdown: bool = True, limit: int = advice.MAX_TIPS) -> list[str]:
    """What to try first beside the fixes of the linked resolved issues: advice for the stated fix
    pattern only, in the terms of the repository's framework, the stated stage and symptom and
    the launcher the report uses. A link's fix pattern is no ground: its own resolution is shown,
    and general advice beside it adds nothing. A stated "not a bug", or a title that says it is a
    feature, documentation or roadmap request (``missing.probably_not_a_bug``), gets no debugging
    advice, which would contradict it. Nor does a report whose error is diagnosed: the diagnosis
    is the specific advice, and the pattern's general advice beside it repeats it at best and at
    worst contradicts it ("offload to CPU" beside a process killed for lack of host memory)."""
    if missing.probably_not_a_bug(triage) or diagnosis_texts(triage):
        return []
    resolved, _ = split_similar(triage.similar)
    picked = advice.tips_for(choice(triage, "fix_pattern"), framework(triage),
                             choice(triage, "stage"), choice(triage, "symptom"),
                             triage.environment.launcher)
    # The fixes of linked resolved issues are the first things to try: beside them, one tip.
    picked = picked[:1 if resolved else limit]
    return [_tip_markdown(t) if markdown else sanitize.plain(t.replace("`", ""), 300) for t in picked]


def _tip_markdown(text: str, limit: int = 300) -> str:
    """Advice is our own text but may quote commands in backticks: keep those as code spans."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # unbalanced backticks: treat it all as prose
        return sanitize.safe_inline(text, limit)
    out = []
    for i, part in enumerate(parts):
        piece = sanitize.safe_code(part, 80) if i % 2 else sanitize.safe_inline(part, limit)
        lead = " " if part[:1].isspace() and i % 2 == 0 else ""
        trail = " " if part[-1:].isspace() and i % 2 == 0 else ""
        out.append(lead + piece + trail if piece else lead)
    return "".join(out).strip()


def split_similar(similar: list[Similar]) -> tuple[list[Similar], list[Similar]]:
    """The first ``MAX_SIMILAR`` distinct links in the engine's order (it ranks them by
    relevance; the comment does not re-rank), split into the fixes offered to the reporter
    (resolved, not ``fix_held_back``) and the rest. ``Similar.resolved`` already requires a
    resolution that says how it was fixed (``models.known_resolution``)."""
    seen: set[tuple[str, int]] = set()
    top: list[Similar] = []
    for hit in similar:
        key = (hit.repo.lower(), hit.number)
        if key not in seen:
            seen.add(key)
            top.append(hit)
    top = top[:MAX_SIMILAR]
    offered = [s for s in top if s.resolved and not s.fix_held_back]
    return offered, [s for s in top if s not in offered]


def similar_ref(similar: Similar, own_repo: str, allowed: frozenset[str]) -> str:
    """``[#123](url)``; the URL is built here, never echoed. Issues of other repositories are
    linked through GitHub's redirect host, so the comment does not write "mentioned this issue"
    on their timelines (``sanitize.reference_url``); a repository not allowed is not linked."""
    url = sanitize.reference_url(similar.repo, similar.number, own_repo)
    if url and sanitize.allowed_link(url, allowed, own_repo=own_repo):
        return f"[#{similar.number}]({url})"
    return f"issue {similar.number}"  # no "#": an unlinked reference must not autolink either


def similar_line(similar: Similar, own_repo: str, allowed: frozenset[str], with_resolution: bool,
                 short: bool = False) -> str:
    """``- [#123](url) (Colossal-AI) title — resolution``; ``short``: ``- [#123](url): resolution``
    (the fix is what the reporter needs; GitHub shows the title on hover)."""
    ref = similar_ref(similar, own_repo, allowed) + _origin(similar, own_repo)
    if short and with_resolution:
        return f"- {ref}: {sanitize.safe_inline(similar.resolution, RESOLUTION_CHARS)}"
    line = f"- {ref} {sanitize.safe_inline(similar.title, TITLE_CHARS)}"
    if with_resolution:
        line += f" — {sanitize.safe_inline(similar.resolution, RESOLUTION_CHARS)}"
    return line


def _origin(similar: Similar, own_repo: str) -> str:
    if not similar.cross_repo and similar.repo.lower() == own_repo.lower():
        return ""  # the issue's own repository needs no marker
    name = FRAMEWORKS.get(similar.repo.lower()) or similar.repo.rsplit("/", 1)[-1]
    return f" ({sanitize.safe_inline(name, 40)})"


def asked_missing(triage: Triage) -> list[MissingInfo]:
    """The requests this comment makes: at most three, fitting what it states
    (``missing.asked_in_comment``, which the backtest shares)."""
    return missing.asked_in_comment(triage)


def missing_lines(triage: Triage) -> list[str]:
    """One checkbox per request. Our own requests (``missing.describe``'s templates) may quote a
    command in backticks, kept as a code span as in the advice; any other text is plain."""
    return [f"- [ ] {missing_markdown(m)}" for m in asked_missing(triage)]


def missing_markdown(item: MissingInfo) -> str:
    if missing.is_template(item):
        return _tip_markdown(item.description)
    return sanitize.safe_inline(item.description, MISSING_CHARS)


def missing_plain(item: MissingInfo) -> str:
    """The request for a terminal (``triage`` without ``--json``): code spans as plain text."""
    text = item.description.replace("`", "") if missing.is_template(item) else item.description
    return sanitize.plain(text, MISSING_CHARS)


# --- the maintainers' block -------------------------------------------------------------------

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
    mentions a topic - such as a title saying "official fix: pip install ...". Only the first
    ``QUOTE_CANDIDATES`` are read: at most ``MAX_EVIDENCE`` are shown, and a stored or refined
    triage with a thousand 5 KB lines took a minute to render when every one was checked."""
    return [q for q in pred.evidence[:QUOTE_CANDIDATES]
            if sanitize.inert_quote(q) and error_signature(q)]


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


def details_block(triage: Triage, related: list[Similar], allowed: frozenset[str],
                  shed: frozenset[str] = frozenset()) -> str:
    """The collapsed block for maintainers: the labels the comment states with their evidence,
    what it held back and why, runner-ups, the links not shown to the reporter (fixes held back
    with their resolution, threads without a fix), the environment, how to correct.
    ``shed`` names the parts left out of a comment over its length budget (``alternatives``,
    ``environment``, ``one_quote`` per label, ``agreement``: the neighbour counts,
    ``related_titles``: cut to their first words, ``related_bare``: none)."""
    resolved, _ = split_similar(triage.similar)
    update: dict[str, object] = {  # agreement is counted over the links the comment shows
        "similar": [] if "agreement" in shed else resolved + related}
    if "one_quote" in shed:
        for dim in _DIM_LABELS:
            pred = triage.prediction(dim)
            update[dim] = pred.model_copy(update={"evidence": quotable(pred)[:QUOTES_PER_LABEL]})
    short = triage.model_copy(update=update)
    parts = [_labels(triage), _evidence(short), _held_back(triage),
             "" if "alternatives" in shed else _alternatives(triage),
             _related(triage, related, allowed, titles="related_titles" not in shed,
                      bare="related_bare" in shed),
             "" if "environment" in shed else _environment(triage),
             ("Triaged with an LLM. " if "llm" in triage.source else "") + COMMANDS]
    body = "\n\n".join(p for p in parts if p)
    return f"<details>\n<summary>{DETAILS_SUMMARY}</summary>\n\n{body}\n\n</details>"


def _evidence(triage: Triage) -> str:
    """The evidence of the stated labels under its heading; when it quotes the report, first the
    note that the quotes are the report's words (``QUOTES_NOTE``)."""
    lines = evidence_lines(triage)
    if not lines:
        return ""
    note = [QUOTES_NOTE] if quotes_report(triage) else []
    return "\n".join([EVIDENCE_HEADING, *note, *lines])


def _named(dimension: str, label_id: str, confidence: float) -> str:
    return f"{taxonomy.name(dimension, label_id)} (`{label_id}`, {pct(confidence)})"


def _labels(triage: Triage) -> str:
    """The stated labels, named, with ids and confidences."""
    shown = [_named(dim, label_id, triage.prediction(dim).confidence)
             for dim in _DIM_LABELS if (label_id := choice(triage, dim))]
    if flag(triage, "distributed_specific") is not None:
        value = "yes" if flag(triage, "distributed_specific") else "no"
        shown.append(f"distributed {value} {pct(triage.distributed_specific.confidence)}")
    if flag(triage, "is_bug") is False:
        shown.append(f"not a bug {pct(triage.is_bug.confidence)}")
    return f"{LABELS_HEADING}: " + ", ".join(shown) if shown else ""


def _held_back(triage: Triage) -> str:
    """Dimensions with a best guess the comment does not state (abstained, or outside the stated
    stage), each with its confidence."""
    lines = []
    for dim, title in _DIM_LABELS.items():
        pred = triage.prediction(dim)
        if choice(triage, dim) is None and taxonomy.label(dim, pred.id) is not None:
            lines.append(f"- {title.lower()}: {_named(dim, pred.id, pred.confidence)}")
    for dim, title in _FLAG_LABELS.items():
        pred = triage.prediction(dim)
        value = pred.id.strip().lower()
        known = value in FLAG_YES | FLAG_NO and (dim == "distributed_specific" or value in FLAG_NO)
        if flag(triage, dim) is None and known:
            shown = title if dim == "is_bug" else f"{title}: {'yes' if value in FLAG_YES else 'no'}"
            lines.append(f"- {shown} ({pct(pred.confidence)})")
    return f"{HELD_BACK_HEADING}\n" + "\n".join(lines) if lines else ""


def _alternatives(triage: Triage) -> str:
    """Runner-ups worth a maintainer's glance, as ids with confidences."""
    shown = []
    for dimension in _DIM_LABELS:
        pred = triage.prediction(dimension)
        picked: list[str] = []
        for label_id, conf in pred.alternatives:
            known = taxonomy.label(dimension, label_id) is not None
            if known and label_id != pred.id and conf >= MIN_ALTERNATIVE and label_id not in picked:
                picked.append(label_id)
                shown.append(f"`{label_id}` {pct(conf)}")
            if len(picked) >= MAX_ALTERNATIVES:
                break
    return f"{ALTERNATIVES_HEADING}: " + ", ".join(shown) if shown else ""


def _related(triage: Triage, related: list[Similar], allowed: frozenset[str],
             titles: bool = True, bare: bool = False) -> str:
    """Relevant issues for maintainers: resolved ones with their fix (not offered to the
    reporter), then those without a known fix (a possible duplicate); without ``titles`` the
    latter on one line, each with its title's first words (``SHORT_TITLE_CHARS``; with
    ``bare``, the last resort over the length budget, none), the fixes still whole."""
    fixed = [similar_line(s, triage.repo, allowed, with_resolution=True, short=not titles)
             for s in related if s.resolved]
    parts = [f"{RELATED_FIXED_HEADING}\n" + "\n".join(fixed)] if fixed else []
    open_ = [s for s in related if not s.resolved]
    if open_ and not titles:
        refs = [similar_ref(s, triage.repo, allowed) + _origin(s, triage.repo)
                + ("" if bare else " " + sanitize.safe_inline(s.title, SHORT_TITLE_CHARS))
                for s in open_]
        parts.append(f"{RELATED_HEADING}: " + "; ".join(refs))
    elif open_:
        lines = [similar_line(s, triage.repo, allowed, with_resolution=False) for s in open_]
        parts.append(f"{RELATED_HEADING}\n" + "\n".join(lines))
    return "\n\n".join(parts)


_ENV_FIELDS = (("torch", "torch"), ("cuda_torch", "CUDA"), ("cuda_nvcc", "nvcc"),
               ("nccl", "NCCL"), ("python", "Python"), ("transformers", "transformers"),
               ("os", ""), ("launcher", "launcher"))


def _environment(triage: Triage) -> str:
    """One code span: ``deepspeed 0.12.3, torch 2.1.0+cu121, NCCL 2.18.1, 2 nodes x 8 A100``."""
    env = triage.environment
    items = [" ".join(v for v in (env.framework, env.framework_version) if v)]
    for key, title in _ENV_FIELDS:
        value = getattr(env, key)
        if key == "cuda_torch" and env.torch and "+cu" in env.torch:
            continue  # the wheel tag already says it
        if value:
            items.append(f"{title} {value}".strip())
    # a count alone says what it counts ("8" under a report was read as an unexplained number)
    count = env.gpu_count and (env.gpu_count if env.gpu_model else
                                f"{env.gpu_count} GPU{'' if env.gpu_count == 1 else 's'}")
    gpus = " x ".join(str(v) for v in (env.nodes and f"{env.nodes} nodes", count, env.gpu_model) if v)
    items.append(gpus)
    shown = ", ".join(i for i in items if i)
    return f"{ENVIRONMENT_HEADING}: {sanitize.safe_code(shown, 200)}" if shown else ""
