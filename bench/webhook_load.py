"""Webhook service under load, on loopback: acknowledgement latency at a fixed request rate, then
how fast the worker threads drain 1,000 queued issues.opened jobs, and the server's memory.

    .venv/bin/python bench/webhook_load.py [--rate 200] [--seconds 15] [--jobs 1000]

The server is ``server.serve`` (what ``triagebot serve`` runs: werkzeug + embedded worker
threads + SQLite queue) in a child process, with GitHub replaced by an in-memory port that keeps
no state. Scenarios: acks with no workers (the receiver alone), acks while workers triage with
the real engine (what GitHub actually sees), drain with a fixed-answer engine (the queue alone)
and with the real engine. The load generator is open-loop: requests are sent on a fixed schedule
whatever the answers do; latency is counted from the scheduled send time."""
from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

import numpy as np

from _common import DATA, ROOT, machine, median, open_loop, rss_mb, table

SECRET = "bench-secret"


# -- the server side (child process) -------------------------------------------------------------

class MemoryPort:
    """A GitHubPort whose issues come from the dev set by number; writes are dropped (so only the
    service's own memory can grow)."""

    def __init__(self, issues: dict[int, tuple[str, str]]) -> None:
        self.issues = issues

    def get_issue(self, repo, number):  # type: ignore[no-untyped-def]
        from triagebot.github.port import IssueState

        title, body = self.issues[number % len(self.issues)]
        return IssueState(repo=repo, number=number, title=title, body=body,
                          author=f"user{number}", url=f"https://github.com/{repo}/issues/{number}")

    def list_comments(self, repo, number):  # type: ignore[no-untyped-def]
        return []

    def create_comment(self, repo, number, body):  # type: ignore[no-untyped-def]
        return number

    def edit_comment(self, repo, comment_id, body):  # type: ignore[no-untyped-def]
        return None

    def add_labels(self, repo, number, labels):  # type: ignore[no-untyped-def]
        return None

    def remove_label(self, repo, number, label):  # type: ignore[no-untyped-def]
        return None

    def repo_labels(self, repo):  # type: ignore[no-untyped-def]
        return []

    def read_file(self, repo, path):  # type: ignore[no-untyped-def]
        return None

    def iter_closed_issues(self, repo, since=None, start_page=0):  # type: ignore[no-untyped-def]
        return iter(())


class FixedEngine:
    """Answers instantly with one fixed triage: isolates the queue and handlers from the model."""

    def __init__(self) -> None:
        from triagebot.domain.models import Prediction, Triage

        p = Prediction(id="unknown", name="Unknown", confidence=0.0, abstained=True)
        self.answer = Triage(stage=p, symptom=p, root_cause=p, fix_pattern=p,
                             distributed_specific=p, is_bug=p)

    def triage(self, issue, **_how):  # type: ignore[no-untyped-def]
        return self.answer


def _wiring(db: str, engine: str) -> tuple:  # type: ignore[type-arg]
    from triagebot.engine.dataset import read_labelled
    from triagebot.settings import Settings

    records = read_labelled(DATA)
    gh = MemoryPort({i: (r.title, r.body) for i, r in enumerate(records)})
    settings = Settings(webhook_secret=SECRET, db=db, index=ROOT / "index")
    overrides = {"port_for": lambda _i: gh}
    if engine == "fixed":
        overrides["engine"] = FixedEngine()
    return settings, overrides


def serve_child(port: int, db: str, engine: str, workers: int) -> None:
    """What ``triagebot serve`` runs (werkzeug + embedded worker threads)."""
    from triagebot.service import wiring as server

    settings, overrides = _wiring(db, engine)
    server.serve(settings, "127.0.0.1", port, workers=workers, **overrides)


def work_child(db: str, engine: str, workers: int) -> None:
    """What ``triagebot worker`` runs, at lower CPU priority than the receiver."""
    from triagebot.service import wiring as server

    os.nice(10)
    settings, overrides = _wiring(db, engine)
    server.work(settings, workers, **overrides)


# -- the client side -----------------------------------------------------------------------------

class Server:
    """The child server process, its address, and probes of its queue and memory."""

    def __init__(self, engine: str, workers: int, separate_workers: int = 0) -> None:
        self.dir = tempfile.mkdtemp(prefix="triagebot-bench-")
        self.port = _free_port()
        db = f"{self.dir}/q.sqlite3"
        self.proc = _child("--serve", str(self.port), db, engine, str(workers))
        self.worker = _child("--work", db, engine, str(separate_workers)) if separate_workers else None
        self.started = time.perf_counter()
        while self.health() is None:
            if self.proc.poll() is not None or time.perf_counter() - self.started > 180:
                raise RuntimeError("server did not start")
            time.sleep(0.2)
        self.ready_s = time.perf_counter() - self.started

    def health(self) -> dict | None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
            conn.request("GET", "/healthz")
            return json.loads(conn.getresponse().read())
        except (OSError, ValueError):
            return None

    def depth(self) -> int:
        return int((self.health() or {}).get("queue_depth") or 0)

    def rss(self) -> float:
        return rss_mb(self.proc.pid)

    def stop(self) -> None:
        for proc in (self.proc, self.worker):
            if proc is not None:
                proc.terminate()  # our own children, by pid
                proc.wait(10)


def _child(*args: str) -> subprocess.Popen:  # type: ignore[type-arg]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRIAGEBOT_LOG_LEVEL": "ERROR"}
    return subprocess.Popen([sys.executable, __file__, *args], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def deliveries(n: int, first: int = 1) -> list[tuple[bytes, dict[str, str]]]:
    """Signed issues.opened deliveries, prepared before the clock starts."""
    from triagebot.service.signature import sign

    out = []
    for number in range(first, first + n):
        payload = {"action": "opened", "issue": {"number": number, "title": "t", "body": "b",
                                                 "state": "open", "user": {"login": f"u{number}"}},
                   "repository": {"full_name": "bench/repo", "name": "repo",
                                  "owner": {"login": "bench"}},
                   "sender": {"login": f"u{number}", "type": "User"}, "installation": {"id": 1}}
        body = (json.dumps(payload, indent=2) + "\n").encode()
        out.append((body, {"Content-Type": "application/json", "X-GitHub-Event": "issues",
                           "X-GitHub-Delivery": str(uuid.uuid4()),
                           "X-Hub-Signature-256": sign(SECRET, body)}))
    return out


def load(port: int, requests: list[tuple[bytes, dict[str, str]]], rate: float,
         senders: int = 32) -> dict:
    """Open loop: request i is due at start + i/rate. Returns latency percentiles (ms)."""
    lat, statuses, wall = open_loop(port, requests, rate, senders)
    return {"n": len(requests), "ok": statuses["200"] + statuses["202"],
            "achieved_rps": round(len(requests) / wall, 1),
            "p50": float(np.nanpercentile(lat, 50)), "p99": float(np.nanpercentile(lat, 99)),
            "max": float(np.nanmax(lat))}


def wait_drained(server: Server, timeout: float) -> tuple[float, list[float]]:
    """Seconds until the queue is empty (from now), and the RSS samples taken meanwhile."""
    start, samples = time.perf_counter(), []
    while server.depth() > 0:
        samples.append(server.rss())
        if time.perf_counter() - start > timeout:
            break
        time.sleep(0.5)
    return time.perf_counter() - start, samples


def ack_scenario(engine: str, workers: int, rate: float, seconds: float, separate: int = 0) -> list:
    server = Server(engine, workers, separate)
    try:
        time.sleep(20 if separate else 0)  # let the worker process load its engine
        result = load(server.port, deliveries(int(rate * seconds)), rate)
        where = f"{separate} in a worker process (nice 10)" if separate else f"{workers} in-process"
        return [f"ack, workers: {where}, {engine} engine", result["n"], result["achieved_rps"],
                round(result["p50"], 1), round(result["p99"], 1), round(result["max"], 1),
                f"{result['ok']}/{result['n']} 2xx", server.rss()]
    finally:
        server.stop()


def drain_scenario(engine: str, jobs: int, workers: int = 2) -> list:
    server = Server(engine, workers)
    try:
        idle = server.rss()
        start = time.perf_counter()
        load(server.port, deliveries(jobs), 200.0)
        _, samples = wait_drained(server, 900)
        took = time.perf_counter() - start  # first delivery posted -> queue empty
        left = server.depth()
        return [f"drain {jobs} jobs, {workers} workers ({engine} engine)", jobs,
                round(jobs / took, 1) if not left else "-", "-", "-", round(took, 1),
                f"{left} left; RSS idle {idle} -> max {max(samples, default=idle)} MB",
                server.rss()]
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", nargs=4, metavar=("PORT", "DB", "ENGINE", "WORKERS"))
    parser.add_argument("--work", nargs=3, metavar=("DB", "ENGINE", "WORKERS"))
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.serve:
        serve_child(int(args.serve[0]), args.serve[1], args.serve[2], int(args.serve[3]))
        return
    if args.work:
        work_child(args.work[0], args.work[1], int(args.work[2]))
        return
    print(machine())
    rows = []
    for workers, engine, separate in ((0, "fixed", 0), (2, "real", 0), (0, "real", 2)):
        runs = [ack_scenario(engine, workers, args.rate, args.seconds, separate)
                for _ in range(args.runs)]
        rows.append(runs[0][:3] + [median([r[i] for r in runs]) for i in (3, 4, 5)]
                    + [runs[-1][6], median([r[7] for r in runs])])
        print(f"  {rows[-1][0]}: done", file=sys.stderr)
    for engine in ("fixed", "real"):
        rows.append(drain_scenario(engine, args.jobs))
        print(f"  {rows[-1][0]}: done", file=sys.stderr)
    print(table(["scenario", "requests/jobs", "rate (req/s or jobs/s)", "p50 ms", "p99 ms",
                 "max ms / drain s", "outcome", "server RSS MB at end"], rows))


if __name__ == "__main__":
    main()
