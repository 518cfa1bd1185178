"""Delivery -> posted comment, end to end (a script, not a test).

    .venv/bin/python bench/e2e_latency.py [--issues 20] [--interval 2.0]

Starts ``triagebot serve`` (real engine, shipped seed index, SQLite queue, 1 worker) as a child
process against the local fake GitHub (tests/support/github_fake.py, which PyGithub talks to over HTTP),
then sends signed ``issues.opened`` deliveries for dev-set issues one every ``--interval`` seconds
and measures, per delivery, the acknowledgement time and the time until the bot's comment exists
on the fake. Each delivery uses its own installation, so the per-installation write pacing
(>= 1 s between writes) is not what is measured; under one installation add ~1 s per write."""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from _common import DATA, ROOT, machine, table

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from support.github_fake import FakeGitHub, app_key_pair  # noqa: E402

SECRET = "bench-secret"
REPO = "bench-org/bench-repo"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(base: str, number: int, title: str, body: str) -> float:
    payload = json.dumps({
        "action": "opened", "installation": {"id": 1000 + number},
        "issue": {"number": number, "title": title, "body": body, "state": "open",
                  "user": {"login": f"user{number}", "type": "User"}, "labels": []},
        "repository": {"full_name": REPO}, "sender": {"login": f"user{number}", "type": "User"},
    }).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), payload, hashlib.sha256).hexdigest()
    request = urllib.request.Request(base + "/webhook", data=payload, method="POST", headers={
        "Content-Type": "application/json", "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": f"bench-{number}-{time.time_ns()}", "X-Hub-Signature-256": signature})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issues", type=int, default=20)
    parser.add_argument("--interval", type=float, default=2.0)
    args = parser.parse_args()
    records = [json.loads(line) for line in DATA.read_text().splitlines()[: args.issues]]
    private, public = app_key_pair()
    fake = FakeGitHub(app_public_key=public)
    fake.start()
    fake.add_label(REPO, "triage: needs-review")
    for number, record in enumerate(records, 1):
        # one author each: the bot triages at most 5 issues an hour per author (flood guard)
        fake.add_issue(REPO, number, title=record["title"], body=record["body"], user=f"user{number}")
    port, tmp = _port(), tempfile.mkdtemp()
    env = {**os.environ, "TRIAGEBOT_WEBHOOK_SECRET": SECRET, "TRIAGEBOT_APP_ID": "1",
           "TRIAGEBOT_PRIVATE_KEY": private, "TRIAGEBOT_GITHUB_API_URL": fake.base_url,
           "TRIAGEBOT_DB": f"{tmp}/bench.sqlite3", "TRIAGEBOT_INDEX": str(ROOT / "index"),
           "TRIAGEBOT_WORKERS": "1"}
    server = subprocess.Popen([sys.executable, "-m", "triagebot", "serve", "--port", str(port)],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base)
        acks, e2e = [], []
        for number, record in enumerate(records, 1):
            sent = time.perf_counter()
            acks.append(_post(base, number, record["title"], record["body"]))
            while not fake.comments(REPO, number):
                if time.perf_counter() - sent > 60:
                    raise SystemExit(f"no comment for issue {number} after 60 s")
                time.sleep(0.005)
            e2e.append(time.perf_counter() - sent)
            time.sleep(max(0.0, args.interval - (time.perf_counter() - sent)))
    finally:
        server.terminate()
        server.wait(timeout=20)
        fake.stop()
    print(machine())
    ms = lambda xs, q: sorted(xs)[min(len(xs) - 1, int(q * len(xs)))] * 1000  # noqa: E731
    print(table(["measure", "n", "p50 ms", "p90 ms", "max ms"], [
        ["ack (POST /webhook)", len(acks), f"{statistics.median(acks) * 1000:.1f}", f"{ms(acks, 0.9):.1f}",
         f"{max(acks) * 1000:.1f}"],
        ["delivery -> comment on GitHub", len(e2e), f"{statistics.median(e2e) * 1000:.0f}", f"{ms(e2e, 0.9):.0f}",
         f"{max(e2e) * 1000:.0f}"],
    ]))


def _wait_healthy(base: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.25)
    raise SystemExit("server did not become healthy")


if __name__ == "__main__":
    main()
