"""What the review page and ``triagebot report`` show, read from the store: recent triages with
their per-dimension review state, and the statistics of maintainers' decisions.

Reads only; the statistics are pure functions of feedback rows so they are tested without a
browser. "Accepted" means a maintainer confirmed the bot's id; anything else is a correction."""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel

from triagebot.domain import taxonomy
from triagebot.domain.models import IndexedIssue, Triage
from triagebot.domain.visibility import Viewer, visible_to
from triagebot.store.records import Feedback, Store

DIMENSIONS = taxonomy.ALL_DIMENSIONS
REVIEW_SOURCES = ("page", "command")
LOW_CONFIDENCE = 0.5
YES_NO = ["yes", "no"]


class DimensionRow(BaseModel):
    dimension: str
    predicted: str
    name: str
    confidence: float
    current: str  # the id after human review (equal to predicted when untouched or accepted)
    state: str  # pending | accepted | corrected
    options: list[str]
    stated: bool = False  # the public comment asserts it (``Triage.stated``); else kept back


class SimilarRow(BaseModel):
    repo: str
    number: int
    url: str
    title: str


class ReviewRow(BaseModel):
    repo: str
    number: int
    url: str
    updated_at: float
    dimensions: list[DimensionRow]
    similar: list[SimilarRow] = []
    title: str = ""  # the issue's title when the triage recorded it
    comment_url: str | None = None  # the bot's comment; None when it stayed silent

    @property
    def stated_dimensions(self) -> list[DimensionRow]:
        return [d for d in self.dimensions if d.stated]

    @property
    def low_confidence(self) -> bool:
        return any(d.confidence < LOW_CONFIDENCE for d in self.dimensions[:4])

    @property
    def needs_review(self) -> bool:
        return any(d.state == "pending" for d in self.dimensions)


def options(dimension: str, stage: str) -> list[str]:
    """Ids a maintainer may choose: symptoms and root causes only inside the (current) stage."""
    if dimension in taxonomy.FLAGS:
        return YES_NO
    if dimension in taxonomy.IN_STAGE:
        return taxonomy.in_stage(dimension, stage) + [taxonomy.UNKNOWN]
    extra = [taxonomy.UNKNOWN] if dimension == "fix_pattern" else []
    return taxonomy.ids(dimension) + extra


def normal_id(dimension: str, value: str | None) -> str | None:
    """Yes/no predictions are spelled several ways by older code ("true"); one spelling here."""
    if dimension in taxonomy.FLAGS and value is not None:
        return "yes" if str(value).lower() in ("yes", "true", "1") else "no"
    return value


def review_row(repo: str, number: int, triage: Triage, updated_at: float,
               feedback: list[Feedback], comment_id: int | None = None) -> ReviewRow:
    latest = {fb.dimension: fb for fb in feedback if fb.source in REVIEW_SOURCES and fb.new_id}
    rows, stage = [], triage.stage.id
    for dim in DIMENSIONS:
        pred = triage.prediction(dim)
        predicted = normal_id(dim, pred.id) or taxonomy.UNKNOWN
        fb = latest.get(dim)
        current = normal_id(dim, fb.new_id) if fb else predicted
        state = "pending" if fb is None else ("accepted" if current == predicted else "corrected")
        if dim == "stage":
            stage = current or stage
        rows.append(DimensionRow(dimension=dim, predicted=predicted, name=pred.name,
                                 confidence=pred.confidence, current=current or predicted,
                                 state=state, options=options(dim, stage),
                                 stated=triage.stated(dim) is not None))
    url = f"https://github.com/{repo}/issues/{number}"
    comment_url = f"{url}#issuecomment-{comment_id}" if comment_id else None
    return ReviewRow(repo=repo, number=number, url=url, updated_at=updated_at, dimensions=rows,
                     title=triage.title, comment_url=comment_url)


Lookup = Callable[[str, int], "IndexedIssue | None"]


def visible_similar(triage: Triage, repo: str, lookup: Lookup | None) -> list[SimilarRow]:
    """The triage's similar issues that ``repo`` may see *now* (``visible_to`` on the indexed item
    as it is today: a repository made private since the triage hides its issues here too). Gone
    from the index, or no index to ask: not shown."""
    if lookup is None:
        return []
    viewer, shown = Viewer.of(repo), []
    for s in triage.similar:
        item = lookup(s.repo, s.number)
        if item is not None and visible_to(item, viewer):
            shown.append(SimilarRow(repo=item.repo, number=item.number, title=item.title[:120],
                                    url=f"https://github.com/{item.repo}/issues/{item.number}"))
    return shown


def recent(store: Store, limit: int = 50, only: str = "",
           lookup: Lookup | None = None) -> list[ReviewRow]:
    """The latest triages, optionally only ``low`` confidence or ``pending`` review ones, each
    with the similar issues its repository may see (``lookup`` finds indexed items)."""
    sql = ("SELECT repo, number, triage, updated_at, comment_id FROM triages "
           "ORDER BY updated_at DESC LIMIT ?")
    rows = []
    for repo, number, raw, updated, comment_id in store.db.query(sql, (limit * 4,)):
        triage = Triage.model_validate_json(raw)
        row = review_row(repo, number, triage, updated, store.feedback(repo, number), comment_id)
        if (only == "low" and not row.low_confidence) or (only == "pending" and not row.needs_review):
            continue
        rows.append(row.model_copy(update={"similar": visible_similar(triage, repo, lookup)}))
    return rows[:limit]


# statistics ----------------------------------------------------------------------------------
def all_feedback(store: Store) -> list[Feedback]:
    sql = ("SELECT repo, number, dimension, old_id, new_id, who, source, at FROM feedback "
           "ORDER BY at, id")
    keys = ("repo", "number", "dimension", "old_id", "new_id", "who", "source", "at")
    return [Feedback(**dict(zip(keys, r))) for r in store.db.query(sql)]


def decisions(feedback: list[Feedback]) -> list[Feedback]:
    """The last review decision per issue and dimension (a later correction overrides)."""
    last: dict[tuple[str, int, str], Feedback] = {}
    for fb in feedback:
        if fb.source in REVIEW_SOURCES and fb.new_id and fb.dimension in DIMENSIONS:
            last[(fb.repo, fb.number, fb.dimension)] = fb
    return list(last.values())


def week_of(at: float) -> str:
    year, week, _ = datetime.fromtimestamp(at, timezone.utc).isocalendar()
    return f"{year}-W{week:02d}"


def acceptance(feedback: list[Feedback]) -> dict[str, dict[str, tuple[int, int]]]:
    """dimension -> ISO week -> (accepted, decided), counting each issue's last decision."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for fb in decisions(feedback):
        cell = out[fb.dimension][week_of(fb.at)]
        cell[0] += normal_id(fb.dimension, fb.old_id) == normal_id(fb.dimension, fb.new_id)
        cell[1] += 1
    return {d: {w: (a, n) for w, (a, n) in sorted(weeks.items())} for d, weeks in out.items()}


def confusion(feedback: list[Feedback], dimension: str = "stage") -> tuple[list[str], list[list[int]]]:
    """Predicted (rows) against the maintainer's id (columns) over the last decisions."""
    pairs = [(normal_id(dimension, fb.old_id) or taxonomy.UNKNOWN, normal_id(dimension, fb.new_id))
             for fb in decisions(feedback) if fb.dimension == dimension]
    order = {v: i for i, v in enumerate(options(dimension, "") if dimension not in
                                        taxonomy.IN_STAGE else _all_ids(dimension))}
    labels = sorted({v for pair in pairs for v in pair if v}, key=lambda v: (order.get(v, 999), v))
    where = {v: i for i, v in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for old, new in pairs:
        matrix[where[old]][where[new or old]] += 1
    return labels, matrix


def _all_ids(dimension: str) -> list[str]:
    return taxonomy.ids(dimension) + [taxonomy.UNKNOWN]


def top_symptoms(store: Store, now: float | None = None, limit: int = 10) -> list[tuple[str, int]]:
    """Most frequent symptoms (after corrections) among issues triaged this calendar month."""
    now = time.time() if now is None else now
    start = datetime.fromtimestamp(now, timezone.utc).replace(day=1, hour=0, minute=0, second=0,
                                                              microsecond=0).timestamp()
    counts: Counter[str] = Counter()
    sql = "SELECT repo, number, triage FROM triages WHERE created_at >= ?"
    for repo, number, raw in store.db.query(sql, (start,)):
        row = review_row(repo, number, Triage.model_validate_json(raw), 0.0,
                         store.feedback(repo, number))
        counts[row.dimensions[1].current] += 1
    return counts.most_common(limit)


class StatedRecord(BaseModel):
    """How the public comment did on issues maintainers reviewed, per dimension: the same
    precision and coverage the backtest (``triagebot eval``) prints, from real decisions."""

    dimension: str
    reviewed: int  # issues with a maintainer's decision on this dimension
    stated: int  # of those, how many the comment asserted
    right: int  # of those, how many the maintainer kept

    @property
    def precision(self) -> float | None:
        return self.right / self.stated if self.stated else None

    @property
    def coverage(self) -> float:
        return self.stated / self.reviewed if self.reviewed else 0.0


def stated_record(decided: list[tuple[str, str | bool | None, str]]) -> list[StatedRecord]:
    """(dimension, what the comment stated or None, the maintainer's id) -> one row per dimension.

    A flag is stated as True/False and reviewed as yes/no; "not a bug" (is_bug False) is the only
    ``is_bug`` statement, so its precision is the share of maintainers who agreed it is none."""
    counts: dict[str, list[int]] = {d: [0, 0, 0] for d in DIMENSIONS}
    for dimension, stated, chosen in decided:
        if dimension not in counts:
            continue
        cell = counts[dimension]
        cell[0] += 1
        if stated is None:
            continue
        said = ("yes" if stated else "no") if isinstance(stated, bool) else stated
        cell[1] += 1
        cell[2] += normal_id(dimension, said) == normal_id(dimension, chosen)
    return [StatedRecord(dimension=d, reviewed=n, stated=st, right=ok)
            for d, (n, st, ok) in counts.items() if n]


def stated_decisions(store: Store, feedback: list[Feedback]) -> list[tuple[str, str | bool | None, str]]:
    """Each last decision with what the stored triage's comment stated for that dimension."""
    triages: dict[tuple[str, int], Triage] = {}
    out: list[tuple[str, str | bool | None, str]] = []
    for fb in decisions(feedback):
        key = (fb.repo, fb.number)
        if key not in triages:
            stored = store.get_triage(fb.repo, fb.number)
            if stored is None:
                continue
            triages[key] = stored.triage
        out.append((fb.dimension, triages[key].stated(fb.dimension), fb.new_id or ""))
    return out


def stats(store: Store, dimension: str = "stage", now: float | None = None) -> dict[str, Any]:
    """Everything the stats view and the report show."""
    feedback = all_feedback(store)
    labels, matrix = confusion(feedback, dimension)
    return {"acceptance": acceptance(feedback), "dimension": dimension,
            "stated": stated_record(stated_decisions(store, feedback)),
            "confusion_labels": labels, "confusion": matrix,
            "symptoms": [(s, taxonomy.name("symptom", s), n) for s, n in top_symptoms(store, now)],
            "decisions": len(decisions(feedback))}


def overall_rate(weeks: dict[str, tuple[int, int]]) -> float:
    accepted = sum(a for a, _ in weeks.values())
    decided = sum(n for _, n in weeks.values())
    return accepted / decided if decided else 0.0
