"""Issue #13: the service keeps its runtime state (the live index it writes when issues close
and maintainers correct labels) in a data directory, seeded from the shipped index on first
start; the package's own ``index/`` is never written (before, the default index was the
package's folder, so a running service changed a checkout under itself)."""
from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from support.service import RecordingPort
from triagebot.domain.visibility import Access
from triagebot.service import jobs as handlers
from triagebot.service import wiring
from triagebot.settings import DEFAULT_INDEX, Settings
from triagebot.store.queue import Job
from triagebot.store.records import Store


def digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.iterdir()) if p.is_file()}


def test_default_live_index_is_in_the_data_directory_not_the_package() -> None:
    assert Settings().index_dir == Path("triagebot-data") / "index" != DEFAULT_INDEX
    env = Settings.from_env({"TRIAGEBOT_DATA_DIR": "/srv/tb"})
    assert env.index_dir == Path("/srv/tb/index")
    assert Settings.from_env({"TRIAGEBOT_DATA_DIR": "/srv/tb", "TRIAGEBOT_INDEX": "/x"}).index_dir == Path("/x")


def test_first_start_seeds_a_copy_of_the_shipped_index_once(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    index = wiring.prepare_index(settings)
    assert index == tmp_path / "data" / "index" and digest(index) == digest(DEFAULT_INDEX)
    (index / "manifest.json").write_text((index / "manifest.json").read_text() + " ")
    assert wiring.prepare_index(settings) == index  # not copied again over what it learned
    assert digest(index) != digest(DEFAULT_INDEX)
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["index"]  # no staging left


def test_processes_starting_together_seed_one_whole_index(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(wiring.prepare_index(settings)))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and digest(results[0]) == digest(DEFAULT_INDEX)
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["index"]


def test_an_explicit_index_is_used_as_it_is(tmp_path: Path) -> None:
    settings = Settings(index=tmp_path / "mine", data_dir=tmp_path / "data")
    assert wiring.prepare_index(settings) == tmp_path / "mine"
    assert not (tmp_path / "data").exists() and not (tmp_path / "mine").exists()


@pytest.mark.integration
def test_a_closed_issue_is_indexed_into_the_data_dir_and_the_package_is_untouched(
        tmp_path: Path) -> None:
    """The real engine and indexer: an ``index_add`` job grows the data directory's index."""
    before = digest(DEFAULT_INDEX)
    settings = Settings(db=str(tmp_path / "d.sqlite3"), data_dir=tmp_path / "data")
    gh = RecordingPort()
    gh.add_issue("org/repo", 7, title="NCCL timeout in allreduce", body="watchdog fired",
                 state="closed", state_reason="completed")
    store = Store(settings.db)
    deps = wiring.build_deps(settings, store, port_for=lambda _i: gh)
    meta = tmp_path / "data" / "index" / "meta.jsonl"
    rows = len(meta.read_text().splitlines())
    job = Job(id=1, kind="index_add", repo="org/repo", number=7, installation_id=1,
              status="running", attempts=1,  # a public repository, as routing records it (#10)
              access=Access(visibility="public", owner="org", installation_id=1).model_dump())
    assert handlers.run(deps, job) == "indexed (public)"
    assert len(meta.read_text().splitlines()) == rows + 1
    assert digest(DEFAULT_INDEX) == before
