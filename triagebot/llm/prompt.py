"""Build the chat messages for the LLM from versioned template files. Pure, given the templates.

Trust layout (RELIABILITY 30, 36, 37): the system turn holds only our own words (role, taxonomy,
output rules); everything a user wrote (the new issue, and titles of past issues) goes into the
user turn, normalised, bounded and inside delimiters that the text itself cannot close. Nothing
from the environment or configuration is ever a template variable, and known secret values are
redacted from the rendered text as a last line of defence.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template

from triagebot.domain import taxonomy
from triagebot.domain.models import Issue, Similar, Triage
from triagebot.text import secrets as secret_shapes
from triagebot.text import signal as text

PROMPT_VERSION = "triage_v1"
ISSUE_BYTES = 8_192  # RELIABILITY 37: title + body after normalisation
TITLE_CHARS = 300
REDACTED = secret_shapes.MASK

# Angle brackets in untrusted text become look-alikes, so no "</issue>" or fake "<system>" tag
# can close or open a delimiter; the words stay readable for classification.
_ANGLES = str.maketrans({"<": "‹", ">": "›"})


@dataclass(frozen=True)
class Prompt:
    """The rendered messages plus the exact issue excerpt the model saw (for evidence checks)."""

    version: str
    system: str
    user: str
    issue_text: str

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


def prompts_dir(env: Mapping[str, str] | None = None) -> Path:
    """``prompts/`` at the repository root (in a wheel: ``triagebot/prompts``, where setup.py puts
    it), or the directory ``TRIAGEBOT_PROMPTS_DIR`` names in ``env`` (the settings' value,
    ``LLMSettings.prompts_dir``, passed on as a mapping)."""
    override = (env or {}).get("TRIAGEBOT_PROMPTS_DIR")
    if override:
        return Path(override)
    packaged = Path(__file__).resolve().parents[1] / "prompts"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "prompts"


@dataclass(frozen=True)
class Templates:
    version: str
    system: Template
    user: Template
    repair: Template

    @classmethod
    def load(cls, directory: Path, version: str = PROMPT_VERSION) -> Templates:
        def read(part: str) -> Template:
            return Template((directory / f"{version}.{part}.md").read_text(encoding="utf-8"))

        return cls(version, read("system"), read("user"), read("repair"))


def build(
    templates: Templates,
    issue: Issue,
    offline: Triage,
    neighbours: list[Similar],
    secrets: tuple[str, ...] = (),
) -> Prompt:
    """Render both turns; the issue text lands only in the user turn, between <issue> tags."""
    excerpt = secret_shapes.redact(issue_excerpt(issue), secrets)
    system = templates.system.substitute(
        taxonomy=taxonomy_text(),
        stage_ids=_quoted(taxonomy.ids("stage")),
        fix_ids=_quoted(taxonomy.ids("fix_pattern")),
    )
    user = templates.user.substitute(
        similar=secret_shapes.redact(similar_text(neighbours), secrets),
        candidates=candidates_text(offline),
        issue=excerpt,
    )
    return Prompt(templates.version, system, user, excerpt)


def repair_message(templates: Templates, error: str) -> str:
    return templates.repair.substitute(error=untrusted(error)[:200])


def untrusted(value: str) -> str:
    """Normalised (NFKC, no invisible or bidi characters) with delimiters neutralised."""
    return text.normalize(value).translate(_ANGLES)


def issue_excerpt(issue: Issue, limit: int = ISSUE_BYTES) -> str:
    """Title and cleaned body within ``limit`` UTF-8 bytes: head, error lines, then tail.

    Cleaning drops HTML comments, tags, images and URLs, so hidden instructions in ``<!-- -->`` and
    link payloads never reach the model. When the body is too long we keep the opening prose, the
    lines that name the failure and the end of the log, which is where the decisive error is."""
    title = " ".join(untrusted(issue.title).split())[:TITLE_CHARS]
    body = untrusted(text.clean(issue.body))
    head = f"Title: {title}\n"
    room = limit - _size(head)
    if _size(body) > room:
        body = _shorten(body, room)
    return (head + body).strip()


def _shorten(body: str, room: int) -> str:
    marker = "\n[… truncated …]\n"
    errors = "\n".join(text.error_lines(body, limit=20))
    errors = _head(errors, room // 4)
    rest = room - _size(errors) - 2 * _size(marker)
    head, tail = _head(body, rest * 2 // 5), _tail(body, rest - rest * 2 // 5)
    return head + marker + errors + marker + tail


def _size(value: str) -> int:
    return len(value.encode("utf-8"))


def _head(value: str, nbytes: int) -> str:
    return value.encode("utf-8")[: max(nbytes, 0)].decode("utf-8", errors="ignore")


def _tail(value: str, nbytes: int) -> str:
    data = value.encode("utf-8")
    return data[len(data) - max(nbytes, 0):].decode("utf-8", errors="ignore") if nbytes > 0 else ""


def taxonomy_text() -> str:
    """The taxonomy as the model reads it: every stage with its symptoms and root causes."""
    blocks = [_stage_block(stage) for stage in taxonomy.ids("stage")]
    fixes = "\n".join(_line(taxonomy.FIX_PATTERNS[f]) for f in taxonomy.ids("fix_pattern"))
    return "\n\n".join(blocks) + "\n\n## Fix patterns\n" + fixes


def _stage_block(stage: str) -> str:
    symptoms = _indented(taxonomy.SYMPTOMS, taxonomy.in_stage("symptom", stage))
    causes = _indented(taxonomy.ROOT_CAUSES, taxonomy.in_stage("root_cause", stage))
    head = _line(taxonomy.STAGES[stage])
    return f"## Stage {head}\nSymptoms:\n{symptoms}\nRoot causes:\n{causes}"


def _indented(labels: dict[str, taxonomy.Label], ids: list[str]) -> str:
    return "\n".join("  " + _line(labels[i]) for i in ids)


def _line(lab: taxonomy.Label) -> str:
    desc = taxonomy.DESCRIPTIONS.get(lab.id, lab.description)
    return f"{lab.id}: {lab.name}" + (f" — {desc}" if desc else "")


def _quoted(values: list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def similar_text(neighbours: list[Similar]) -> str:
    if not neighbours:
        return "(none found)"
    return "\n".join(_similar_line(n) for n in neighbours)


def _similar_line(n: Similar) -> str:
    title = " ".join(untrusted(text.strip_markup(n.title)).split())[:200]
    lab = n.labels
    where = f"#{n.number}" + (f" ({n.repo}, other repository)" if n.cross_repo else "")
    resolution = " ".join(untrusted(text.strip_markup(n.resolution)).split())[:300]
    resolution = resolution if n.resolved else "unresolved"
    return (
        f"- {where} [{n.status}] stage={lab.stage} symptom={lab.symptom} "
        f"root_cause={lab.root_cause} fix_pattern={lab.fix_pattern} | title: {title} | "
        f"resolution: {resolution}"
    )


def candidates_text(offline: Triage) -> str:
    lines = []
    for dim in taxonomy.DIMENSIONS:
        pred = offline.prediction(dim)
        alts = pred.alternatives or [(pred.id, pred.confidence)]
        lines.append(f"{dim}: " + ", ".join(f"{i} ({p:.2f})" for i, p in alts[:3]))
    return "\n".join(lines)
