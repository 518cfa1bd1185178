"""``index sync`` against a paged fake GitHub: several pages, a rate limit mid-way, an
interruption and a restart - and every issue ingested exactly once."""
from __future__ import annotations

from collections import Counter

import pytest

from support.review import PagedGitHub, closed_issue, live_engine, make_index, reply, seed_records
from triagebot.domain.repo_config import CONFIG_PATH, parse_repo_config
from triagebot.github.errors import RateLimited, TransientError
from triagebot.learning import closed_issue as ci
from triagebot.learning.sync import Syncer, SyncState
from triagebot.store.records import Store

CONFIG = 'label_map:\n  "4.2": "memory"\n  S1: "build"\n  distributed_specific: "distributed"\n'


def _github() -> PagedGitHub:
    titles = ["cuda out of memory with zero3 offload", "pip install fails building ops",
              "training hangs at allreduce", "nccl timeout between nodes",
              "cuda out of memory again zero3", "import deepspeed undefined symbol",
              "inference crashes in generate", "torchrun launch fails", "question about docs",
              "memory grows with offload optimizer"]
    labels = {1: ["memory", "distributed"], 2: ["build"], 5: ["memory"], 10: ["memory"]}
    reasons = {5: "duplicate", 9: "not_planned"}
    issues = [closed_issue(n, t, labels.get(n), reasons.get(n, "completed"))
              for n, t in enumerate(titles, 1)]
    gh = PagedGitHub(issues, per_page=3)
    gh.files[("org/repo", CONFIG_PATH)] = CONFIG
    gh.comments[("org/repo", 1)] = [reply("Fixed by lowering the bucket size. See https://x.y/z "
                                          "and thanks @bob for the report! More text follows here.")]
    gh.comments[("org/repo", 5)] = [reply("Duplicate of #1", cid=2)]
    gh.comments[("org/repo", 9)] = [reply("We will not support this configuration, sorry about that.",
                                          cid=3)]
    return gh


def test_sync_survives_rate_limit_and_restart_ingesting_each_issue_once(tmp_path):
    index_dir = make_index(tmp_path / "index")
    gh, waits, lines = _github(), [], []
    gh.fail_page[1] = [RateLimited("secondary", retry_after=7)]
    calls = {"n": 0}  # the 7th issue's comment listing fails: the run stops there
    original = gh.list_comments

    def flaky(repo, number):
        calls["n"] += 1
        if calls["n"] == 7:
            raise TransientError("connection reset")
        return original(repo, number)

    gh.list_comments = flaky
    state_file = tmp_path / "state.json"
    store = Store(tmp_path / "db.sqlite3")
    first = Syncer(gh, live_engine(index_dir), "org/repo", state_file, store=store,
                   sleep=waits.append, progress=lines.append)
    with pytest.raises(TransientError):
        first.run()
    assert waits == [7.0]
    saved = SyncState.load(state_file, "org/repo", None)
    assert saved.ingested == 6 and saved.page == 2 and not saved.finished

    gh.list_comments = original
    second = Syncer(gh, live_engine(index_dir), "org/repo", state_file, store=store,
                    sleep=waits.append, progress=lines.append)
    state = second.run()
    assert state.finished and state.ingested == 10
    assert gh.pages_served == [0, 0, 1, 2, 2, 3]  # each resume re-reads only the page it was on

    index = live_engine(index_dir).index
    mine = [i for i in index.items if i.repo == "org/repo"]
    assert sorted(i.number for i in mine) == list(range(1, 11))
    assert len(index) == len(seed_records()) + 10
    comment_calls = Counter(args[1] for name, args in gh.calls if name == "list_comments")
    assert set(comment_calls.values()) == {1}  # no issue was fetched again after ingestion
    by = {i.number: i for i in mine}
    assert by[1].status == "confirmed" and by[1].labels.symptom == "4.2"
    assert by[1].labels.stage == "S4" and by[1].labels.distributed_specific is True
    assert by[2].labels.stage == "S1"
    assert by[3].status == "predicted"
    assert by[5].close_reason == "duplicate" and by[5].duplicate_of == 1 and not by[5].resolved
    assert by[9].close_reason == "not_planned" and not by[9].resolved
    assert by[1].resolved and "http" not in by[1].resolution and "@bob" not in by[1].resolution
    assert store.get_triage("org/repo", 3) is not None  # predicted ones are reviewable
    assert store.get_triage("org/repo", 3).author is None
    assert any("rate limited; waiting 7s" in line for line in lines)

    again = Syncer(gh, live_engine(index_dir), "org/repo", state_file, sleep=waits.append).run()
    assert again.ingested == 0 and again.skipped == 10


def test_sync_gives_up_after_repeated_rate_limits(tmp_path):
    index_dir = make_index(tmp_path / "index")
    gh, waits = _github(), []
    gh.fail_page[0] = [RateLimited(retry_after=1)] * 4
    syncer = Syncer(gh, live_engine(index_dir), "org/repo", tmp_path / "s.json",
                    sleep=waits.append, max_waits=2)
    with pytest.raises(RateLimited):
        syncer.run()
    assert waits == [1.0, 1.0]


def test_resolution_line_takes_last_substantive_maintainer_reply():
    comments = [reply("The fix is to set NCCL_P2P_DISABLE=1 on these machines. It works.", cid=1),
                reply("I have the same problem with the latest version of the code base!",
                      association="NONE", cid=2),
                reply("thanks, closing", cid=3)]
    assert ci.resolution_line(comments) == ("The fix is to set NCCL_P2P_DISABLE=1 on these "
                                            "machines. It works.")
    long = reply("Upgrade torch to 2.1 please. " * 20 + "@someone see #12 https://evil.example/x")
    line = ci.resolution_line([long])
    assert len(line) <= 200 and line.startswith("Upgrade torch")
    assert ci.resolution_line([reply("> quoted text from the reporter that is long enough\nok")]) \
        == ci.UNRESOLVED
    bot = reply("This is an automated message from a bot that is long enough to count.")
    assert ci.resolution_line([bot.model_copy(update={"author_type": "Bot"})]) == ci.UNRESOLVED


def test_resolution_line_neutralises_mentions_links_and_references():
    line = ci.resolution_line([reply("Fixed by @alice in #123, see https://example.com/x for more.")])
    assert "@" not in line and "#1" not in line and "example.com" not in line


def test_mapped_labels_imply_stage_and_drop_inconsistent_ids():
    mapping = ci.inverse_label_map(parse_repo_config(
        'label_map:\n  "4.2": "memory"\n  "R1.2": "build-env"\n  F5: "offload"\n'))
    labels = ci.confirmed_labels(ci.mapped_ids(["Memory", "build-env", "offload"], mapping))
    assert labels.stage == "S4" and labels.symptom == "4.2"
    assert labels.root_cause == "unknown" and labels.fix_pattern == "F5"
    assert ci.confirmed_labels(ci.mapped_ids(["offload"], mapping)) is None
    assert ci.close_reason(None) == "unknown" and ci.close_reason("not_planned") == "not_planned"
