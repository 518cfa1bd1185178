"""Helpers for the review/learning/sync tests: a small labelled index built with the hashing
embedder (instant), a paged fake GitHub for ``index sync``, and an app with the review page."""
from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.engine import permissive_calibration  # noqa: E402
from support.service import RecordingPort  # noqa: E402
from triagebot.domain.models import LabelledIssue, Labels  # noqa: E402
from triagebot.engine.build import build_index  # noqa: E402
from triagebot.engine.embed import HashingEmbedder  # noqa: E402
from triagebot.github.port import CommentState, IssueState  # noqa: E402
from triagebot.learning.live import LiveEngine  # noqa: E402
from triagebot.settings import Settings  # noqa: E402

TOKEN = "review-token-0123456789abcdef"
SEED = [
    ("S1", "1.1", "R1.2", "F2", "pip install deepspeed fails building fused_adam op with nvcc error {i}"),
    ("S1", "1.2", "R1.1", "F2", "import deepspeed raises ImportError undefined symbol torch version {i}"),
    ("S2", "2.1", "R2.1", "F1", "torchrun launch fails init_process_group master_addr env rank {i}"),
    ("S2", "2.2", "R2.3", "F4", "nccl connection timeout between nodes infiniband socket ifname {i}"),
    ("S4", "4.2", "R4.5", "F5", "cuda out of memory zero3 offload optimizer cpu memory grows {i}"),
    ("S4", "4.11", "R4.7", "F3", "training hangs at allreduce step all ranks stall forever {i}"),
    ("S5", "5.1", "R5.4", "F6", "inference init_inference crashes generate kernel injection {i}"),
]


def seed_records(per_kind: int = 3) -> list[LabelledIssue]:
    records = []
    for k, (stage, symptom, cause, fix, text) in enumerate(SEED):
        for i in range(per_kind):
            number = 1000 + 10 * k + i
            records.append(LabelledIssue(
                repo="seed/repo", number=number, title=text.format(i=i).split(" with ")[0],
                body=text.format(i=i) + " traceback below", state="closed",
                close_reason="completed", resolution=f"fixed in release {i}",
                labels=Labels(stage=stage, symptom=symptom, root_cause=cause, fix_pattern=fix,
                              distributed_specific=stage in ("S2", "S4"))))
    return records


def make_index(directory: Path) -> Path:
    """The seed index with a permissive calibration: 21 issues are too few to calibrate, and an
    uncalibrated index states nothing and links nothing (``engine.calibration``)."""
    index, _ = build_index(seed_records(), HashingEmbedder())
    index.calibration = permissive_calibration()  # too small to calibrate itself: state and link
    index.save(directory)
    return directory


def live_engine(directory: Path) -> LiveEngine:
    return LiveEngine.load(directory, embedder=HashingEmbedder())


def settings(tmp_path: Path, index_dir: Path) -> Settings:
    return Settings(webhook_secret="s" * 20, db=str(tmp_path / "t.sqlite3"), index=index_dir,
                    admin_token=TOKEN)


class PagedGitHub(RecordingPort):
    """Closed issues served in pages of ``per_page``; ``fail_page[p]`` raises before page ``p``
    is served (as a paginating client would when fetching it)."""

    def __init__(self, closed: list[IssueState], per_page: int = 3) -> None:
        super().__init__()
        self.closed, self.per_page = closed, per_page
        self.fail_page: dict[int, list[Exception]] = {}
        self.pages_served: list[int] = []

    def iter_closed_issues(self, repo: str, since: Any = None, start_page: int = 0) -> Iterator:
        page = start_page
        while page * self.per_page < len(self.closed):
            queued = self.fail_page.get(page)
            if queued:
                raise queued.pop(0)
            self.pages_served.append(page)
            for issue in self.closed[page * self.per_page:(page + 1) * self.per_page]:
                yield page, issue
            page += 1


def closed_issue(number: int, title: str, labels: list[str] | None = None,
                 reason: str | None = "completed") -> IssueState:
    return IssueState(repo="org/repo", number=number, title=title, body=title + " details here",
                      state="closed", state_reason=reason, labels=labels or [], author="alice",
                      url=f"https://github.com/org/repo/issues/{number}")


def reply(body: str, association: str = "MEMBER", author: str = "maint", cid: int = 1) -> CommentState:
    return CommentState(id=cid, body=body, author=author, author_association=association)


def csrf_of(html: str) -> str:
    """The CSRF token a review page form carries."""
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]


def log_in(client: Any) -> str:
    """Log a Flask test client in with ``TOKEN``; returns the CSRF token of the review page."""
    page = client.get("/review/login").get_data(as_text=True)
    resp = client.post("/review/login", data={"token": TOKEN, "csrf": csrf_of(page)})
    assert resp.status_code == 302
    return csrf_of(client.get("/review", headers={"Accept": "text/html"}).get_data(as_text=True))
