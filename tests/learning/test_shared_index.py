"""Issue #14: the database is the record of what the bot learns. Two processes' caches over one
database (here two ``SharedIndex`` objects with their own connections, real SQLite and, when
TRIAGEBOT_TEST_POSTGRES_URL is set, real PostgreSQL): a change written through one is seen by the
other after catching up on only the newer rows; a private repository's issue stays out of other
repositories' triages through this path too; a failed writer changes nothing; the seed is imported
once; the classifier is fitted by one trainer and picked up, never refitted by a job."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from support.engine import hashing_index, records
from support.learned import database_url
from triagebot.domain.models import Issue, Labels
from triagebot.domain.visibility import Access, Change, Viewer
from triagebot.engine import classify
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.index import IndexError_, IssueIndex
from triagebot.github.port import IssueState
from triagebot.learning import live as learning
from triagebot.learning import shared
from triagebot.learning.visibility import IndexKeeper
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore

TEXT = "flibbergrad allreduce hangs forever on the quasar cluster after step 1200 with zero3"
LABELS = Labels(stage="S4", symptom="4.11", root_cause="R4.7", fix_pattern="F3")


OPENED: list[Database] = []


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Every database a test opens is closed when it ends: a connection pool left to the garbage
    collector can be finalised in its own worker thread, which cannot join itself (an error at
    some later test's teardown)."""
    with database_url(request.param, tmp_path) as found:
        try:
            yield found
        finally:
            while OPENED:
                OPENED.pop().close()


def _opened(url: str, pool_size: int = 2) -> Database:
    OPENED.append(Database(url, pool_size=pool_size))
    return OPENED[-1]


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    hashing_index().save(tmp_path / "seed")
    return tmp_path / "seed"


def process(url: str, seed: Path | None = None) -> shared.SharedIndex:
    """What one worker process holds: its own database connection(s) and its own cache."""
    return shared.open_shared(LearnedStore(_opened(url)), seed)


def closed(number: int, repo: str = "org/repo", text: str = TEXT) -> IssueState:
    return IssueState(repo=repo, number=number, title=text[:60], body=text, state="closed",
                      state_reason="completed", author="alice",
                      url=f"https://github.com/{repo}/issues/{number}")


def add(target: shared.SharedIndex, issue: IssueState, access: Access = learning.PUBLIC) -> None:
    entry = learning.ClosedEntry(issue, LABELS, True, "unresolved", "predicted", access=access)
    rows = learning.embedded(HashingEmbedder(), [entry])
    with target.writing() as index:
        index.add(*rows)


def test_a_change_through_one_process_reaches_the_other_by_its_newer_rows_only(url: str, seed: Path) -> None:
    a, b = process(url, seed), process(url)
    before = b.current()
    assert len(before) == len(a.current()) == len(records()) and a.version == b.version > 0
    add(a, closed(9001))
    key = a.current().items[0].key
    assert learning.correct_index(a, key[0], key[1], "stage", "S3")
    assert a.store.rows_since(b.version)[0].version > b.version
    assert len(a.store.rows_since(b.version)) == 2  # only what changed is read
    assert b.catch_up() == 2 and b.current() is not before  # swap on write: a caught-up copy...
    assert len(before) == len(records()) and before.row_of(("org/repo", 9001)) is None  # ...of it
    assert b.current().row_of(("org/repo", 9001)) is not None
    assert b.current().items[b.current().row_of(key)].labels.stage == "S3"
    assert b.current().items[b.current().row_of(key)].status == "confirmed"
    assert b.catch_up() == 0 and a.version == b.version


def test_versions_only_grow_and_every_change_is_one_version(url: str, seed: Path) -> None:
    a = process(url, seed)
    a.current()
    start = a.version
    for n in range(3):
        add(a, closed(9100 + n))
    versions = [row.version for row in a.store.rows_since(start)]
    assert versions == sorted(versions) == [start + 1, start + 2, start + 3]
    with a.writing():
        pass  # a writer that changes nothing writes nothing and takes no version
    assert a.store.head() == a.version == start + 3


def test_removed_and_moved_issues_leave_the_other_cache_and_the_record(url: str, seed: Path) -> None:
    a, b = process(url, seed), process(url)
    add(a, closed(1, "acme/gone"))
    add(a, closed(2, "acme/old"))
    b.current()
    keeper = IndexKeeper(a)
    keeper.apply(Change(action="delete_repo", repos=("acme/gone",)))
    keeper.apply(Change(action="rename", repos=("acme/old",), new_repo="acme/new"))
    b.catch_up()
    keys = b.current().keys()
    assert ("acme/gone", 1) not in keys and ("acme/old", 2) not in keys and ("acme/new", 2) in keys
    stored = {(r.repo, r.number): r for r in a.store.rows_since(0)}
    assert stored[("acme/gone", 1)].removed and stored[("acme/gone", 1)].vector is None
    assert stored[("acme/old", 2)].item is None  # nothing of it is kept under the old key
    assert process(url).current().keys() == keys  # a cold start sees the same


def test_a_private_issue_indexed_through_one_process_stays_home_in_the_others(url: str, seed: Path) -> None:
    a, b = process(url, seed), process(url)
    engine_b = learning.LiveEngine(b, HashingEmbedder())
    # one organisation's repositories, whose unresolved threads may link each other
    # (``relevance.linkable``): only the private one's privacy keeps it from the others
    add(a, closed(5, "acme/secret"), Access(visibility="private", owner="acme", installation_id=3))
    add(a, closed(6, "acme/lic"))
    engine_b.refresh()
    asking = Issue(repo="acme/app", number=1, title=TEXT[:60], body=TEXT)
    elsewhere = {(s.repo, s.number) for s in engine_b.triage(asking, viewer=Viewer.of("acme/app")).similar}
    home = Issue(repo="acme/secret", number=77, title=TEXT[:60], body=TEXT)
    at_home = {(s.repo, s.number) for s in engine_b.triage(home, viewer=Viewer.of("acme/secret", 3)).similar}
    assert ("acme/lic", 6) in elsewhere and ("acme/secret", 5) not in elsewhere
    assert ("acme/secret", 5) in at_home


def test_a_failed_writer_changes_nothing_and_its_cache_is_rebuilt(url: str, seed: Path) -> None:
    a = process(url, seed)
    head, count = a.store.head(), len(a.current())
    with pytest.raises(RuntimeError), a.writing() as index:
        rows = learning.embedded(HashingEmbedder(), [learning.ClosedEntry(
            closed(42), LABELS, True, "unresolved", "predicted")])
        index.add(*rows)
        raise RuntimeError("the worker fell over mid-write")
    assert a.store.head() == head and a.store.count() == count
    assert len(a.current()) == count and a.current().row_of(("org/repo", 42)) is None


def test_processes_starting_together_import_the_seed_once(url: str, seed: Path) -> None:
    errors: list[BaseException] = []

    def start() -> None:
        try:
            process(url, seed).current()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store = LearnedStore(_opened(url, pool_size=1))
    assert errors == [] and store.count() == len(records())
    assert store.head() == 1  # one import, one version


def test_export_writes_the_seed_format_back_and_import_merges_or_replaces(url: str, seed: Path,
                                                                          tmp_path: Path) -> None:
    a = process(url, seed)
    add(a, closed(9001))
    assert shared.export_dir(a, tmp_path / "out") == len(records()) + 1
    out = IssueIndex.load(tmp_path / "out")
    assert out.keys() == a.current().keys()
    assert out.calibration == a.current().calibration  # the calibration record travels too
    np.testing.assert_array_equal(out.vectors[out.row_of(("org/repo", 9001))],
                                  a.current().vectors[a.current().row_of(("org/repo", 9001))])
    result = shared.import_dir(a.store, seed)  # merge: what was learned since stays
    assert result["imported"] == len(records()) and result["removed"] == 0
    assert a.catch_up() == len(records()) and a.current().row_of(("org/repo", 9001)) is not None
    assert shared.import_dir(a.store, seed, replace=True)["removed"] == 1
    a.catch_up()
    assert a.current().row_of(("org/repo", 9001)) is None and len(a.current()) == len(records())


def test_an_empty_database_or_other_rule_features_are_a_clear_error(url: str, seed: Path) -> None:
    with pytest.raises(IndexError_, match="index import"):
        process(url).current()
    a = process(url, seed)
    with a.store.change() as change:
        change.set_meta({"features_id": "something-else"})
    with pytest.raises(IndexError_, match="other rule features"):
        process(url).current()


def test_one_trainer_at_a_time_and_engines_take_its_classifier_without_fitting(
        url: str, seed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = process(url, seed), process(url)
    engine_b = learning.LiveEngine(b, HashingEmbedder())  # no artifact yet: fitted once, at load
    assert a.store.take_lease(shared.TRAINER_LEASE, "someone-else", 60)
    assert shared.train(a)["trained"] is False  # the lease is held elsewhere
    a.store.release_lease(shared.TRAINER_LEASE, "someone-else")
    first = shared.train(a)
    assert first["trained"] is True and first["issues"] == len(records())
    assert shared.train(a)["trained"] is False  # nothing changed since: nothing to do

    def no_fit(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a job refitted the classifier")

    monkeypatch.setattr(classify.Classifier, "fit", no_fit)
    engine_b.refresh()
    assert engine_b.engine.classifier is not None and engine_b._fitted == first["version"]
    probe = np.ones((1, b.current().dim), np.float32)
    features = np.zeros((1, b.current().n_features), np.float32)
    restored = shared.classifier_from_bytes(shared.classifier_to_bytes(engine_b.engine.classifier),
                                            b.current().dim + b.current().n_features)
    assert restored.distributions(probe, features) == engine_b.engine.classifier.distributions(probe, features)
    with pytest.raises(ValueError, match="inputs"):
        shared.classifier_from_bytes(shared.classifier_to_bytes(restored), 3)
    learning.LiveEngine(process(url), HashingEmbedder())  # a new process loads it: no fit either


def test_a_lapsed_lease_is_taken_over_and_ones_own_is_extended(url: str, seed: Path) -> None:
    store = process(url, seed).store
    assert store.take_lease("x", "a", 10, now=100.0)
    assert not store.take_lease("x", "b", 10, now=105.0)
    assert store.take_lease("x", "a", 10, now=105.0)  # extended to 115
    assert not store.take_lease("x", "b", 10, now=112.0)
    assert store.take_lease("x", "b", 10, now=116.0)  # a died: its lease lapsed


def test_a_command_correction_brings_its_stage_and_skips_unknown_issues(url: str, seed: Path) -> None:
    a = process(url, seed)
    add(a, closed(7))
    assert learning.correct_by_command(a, "org/repo", 7, "symptom", "1.1")
    item = a.current().items[a.current().row_of(("org/repo", 7))]
    assert (item.labels.stage, item.labels.symptom, item.status) == ("S1", "1.1", "confirmed")
    assert not learning.correct_by_command(a, "org/repo", 404, "stage", "S2")
    assert not learning.correct_by_command(a, "org/repo", 7, "nonsense", "S2")

