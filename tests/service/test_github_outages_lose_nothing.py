"""Issue #13: waiting on GitHub never loses a triage. Real store, queue, worker and handlers over
the real PyGithub port and the fault-injecting fake GitHub on 127.0.0.1, on a fake clock: a long
502 outage, then secondary rate limits, with an attempt budget of 2; a rate limit pauses the
whole installation (once, in the database); dead letters show in ``/healthz`` and
``triagebot report`` and ``triagebot requeue`` revives them."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.clock import FakeClock
from support.github import INSTALLATION, settings
from support.github_fake import FakeGitHub
from support.service import SECRET, Rig, live_server
from triagebot.cli import main as cli
from triagebot.github.client import installation_port
from triagebot.github.ratelimit import QuotaTracker, WritePacer
from triagebot.service.app import create_app
from triagebot.settings import Settings
from triagebot.store.queue import JobSpec
from triagebot.store.records import Store

HOUR = 3600.0
SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes "
                        "before you try again."}


class OutageRig(Rig):
    """The shared rig as one worker process of ``triagebot serve`` runs it: the real PyGithub
    port to the fake GitHub server, the quota tracker wired into the port and the jobs, and an
    attempt budget of 2."""

    def __init__(self, tmp_path: Path, fake: FakeGitHub, clock: FakeClock,
                 rsa_pair: tuple[str, str]) -> None:
        self.fake = fake
        quota = QuotaTracker(clock=clock)
        self.pygithub = installation_port(settings(fake, rsa_pair), INSTALLATION, clock=clock,
                                          sleep=clock.sleep, quota=quota,
                                          pacer=WritePacer(clock=clock, sleep=clock.sleep))
        super().__init__(tmp_path, self.pygithub, clock, max_attempts=2, indexer=None,
                         paused=quota.resume_in, author_limit=100)
        self.db_path = self.store.db.url

    def open_issue(self, number: int) -> None:
        self.fake.add_issue("o/r", number, "NCCL timeout", "RuntimeError: NCCL watchdog timeout")
        self.queue.enqueue(JobSpec(kind="triage", payload={"reason": "opened"},
                                   dedupe_key=f"triage:o/r#{number}", installation_id=INSTALLATION,
                                   repo="o/r", number=number))

    def run_until(self, end: float, step: float = 60.0) -> None:
        """Worker polls every ``step`` seconds of fake time until ``end``."""
        while self.clock.now < end:
            self.worker.drain()
            self.clock.now += step


@pytest.fixture
def rig(tmp_path: Path, fake: FakeGitHub, clock: FakeClock,
        rsa_pair: tuple[str, str]) -> Iterator[OutageRig]:
    r = OutageRig(tmp_path, fake, clock, rsa_pair)
    yield r
    r.pygithub.close()


def test_ten_hour_outage_then_secondary_limits_end_with_exactly_one_comment_each(rig: OutageRig) -> None:
    """Every request answers 502 for 10 h (token minting included), then comment POSTs answer
    403 with Retry-After for 20 minutes. Before the fix all three jobs dead-lettered after their
    2 attempts (7.5 minutes); now each ends with exactly one comment, no attempt spent waiting."""
    start = rig.clock.now
    for number in (1, 2, 3):
        rig.open_issue(number)
    outage_end = start + 10 * HOUR
    rig.fake.fail_until("*", r"", 502, until=outage_end)
    rig.fake.fail_until("POST", r"/comments$", 403, until=outage_end + 1200,
                        headers={"Retry-After": "600"}, body=SECONDARY)
    rig.run_until(outage_end)
    assert rig.queue.jobs("dead") == [] and len(rig.queue.jobs("queued")) == 3
    assert all(not rig.fake.comments("o/r", n) for n in (1, 2, 3))
    rig.run_until(outage_end + 2 * HOUR)
    assert [len(rig.fake.comments("o/r", n)) for n in (1, 2, 3)] == [1, 1, 1]
    done = rig.queue.jobs("done")
    assert len(done) == 3 and rig.queue.jobs("dead") == []
    assert all(job.attempts == 1 for job in done)
    limited = [r for r in rig.fake.requests if r.status == 403]
    assert 1 <= len(limited) <= 3, "the installation pause keeps the other jobs out of the limit"


def test_secondary_limit_pauses_the_installation_once_for_every_job(rig: OutageRig, tmp_path: Path) -> None:
    """A 90 s secondary limit hit by the first of ten jobs: the other nine wait for it without a
    request (before: each job discovered the limit itself), the pause is one row in the database
    that another worker process sees, and afterwards every issue gets its one comment."""
    for number in range(1, 11):
        rig.open_issue(number)
    start = rig.clock.now
    rig.fake.fail_until("POST", r"/comments$", 403, until=start + 90,
                        headers={"Retry-After": "90"}, body=SECONDARY)
    rig.worker.drain()
    assert [r.status for r in rig.fake.requests].count(403) == 1
    before = len(rig.fake.requests)
    other_process = Store(rig.db_path, clock=rig.clock)
    assert other_process.installation_pause(INSTALLATION) == pytest.approx(90, abs=5)
    assert other_process.db.query("SELECT COUNT(*) FROM installation_pauses")[0][0] == 1
    while rig.clock.now + 10 < start + 90:  # the worker polls through the limit
        rig.clock.now += 10
        rig.worker.drain()
    assert len(rig.fake.requests) == before, "no job of the paused installation called GitHub"
    queued = rig.queue.jobs("queued")
    assert len(queued) == 10 and all(job.attempts == 0 for job in queued)
    rig.run_until(start + 900, step=30)
    assert [len(rig.fake.comments("o/r", n)) for n in range(1, 11)] == [1] * 10
    assert len(rig.queue.jobs("done")) == 10


def test_other_installations_are_not_paused(rig: OutageRig) -> None:
    rig.store.pause_installation(INSTALLATION + 1, 3600, "secondary limit")
    rig.open_issue(1)
    rig.worker.drain()
    assert len(rig.fake.comments("o/r", 1)) == 1


def test_dead_letters_show_in_healthz_and_report_and_requeue_revives_them(
        rig: OutageRig, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An outage longer than the 24 h deadline dead-letters the job (kept, with its error); once
    GitHub is back, ``triagebot requeue --all`` makes it run again: exactly one comment."""
    rig.open_issue(1)
    start = rig.clock.now
    rig.fake.fail_until("*", r"", 503, until=start + 30 * HOUR)
    rig.run_until(start + 23.5 * HOUR, step=300)
    assert rig.queue.jobs("dead") == [], "dead before the 24 h deadline"
    rig.run_until(start + 26 * HOUR, step=300)
    [dead] = rig.queue.jobs("dead")
    assert "503" in (dead.last_error or "") and "24" in (dead.last_error or "")

    app = create_app(Settings(webhook_secret=SECRET, db=rig.db_path), store=rig.store,
                     queue=rig.queue)
    with live_server(app) as addr:
        import http.client

        conn = http.client.HTTPConnection(addr, timeout=5)
        conn.request("GET", "/healthz")
        health = json.loads(conn.getresponse().read())
    assert health["dead_letters"] == 1 and health["queue_depth"] == 0

    capsys.readouterr()
    assert cli.main(["report", "--db", rig.db_path]) == 0
    out = capsys.readouterr().out
    assert "dead letters: 1" in out and f"job {dead.id}: triage o/r#1" in out

    rig.clock.now = max(rig.clock.now, start + 30 * HOUR)  # GitHub is back
    assert cli.main(["requeue", "--all", "--db", rig.db_path]) == 0
    assert f"requeued 1 dead jobs: {dead.id}" in capsys.readouterr().out
    rig.clock.now = max(rig.clock.now, time.time()) + 1  # the CLI stamped run_after on real time
    rig.worker.drain()
    assert len(rig.fake.comments("o/r", 1)) == 1
    [done] = rig.queue.jobs("done")
    assert done.id == dead.id and done.attempts == 1


def test_requeue_by_id_refuses_bad_input_with_one_line(rig: OutageRig,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    rig.open_issue(1)
    capsys.readouterr()
    assert cli.main(["requeue", "--db", rig.db_path]) == 2
    assert cli.main(["requeue", "--all", "1", "--db", rig.db_path]) == 2
    assert cli.main(["requeue", "999", "--db", rig.db_path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("triagebot: error: ") for line in err)
    assert "999" in err[-1]
    assert cli.main(["requeue", "1", "--db", str(Path(rig.db_path).with_name("nope.db"))]) == 2
    assert [job.status for job in rig.queue.jobs()] == ["queued"]
