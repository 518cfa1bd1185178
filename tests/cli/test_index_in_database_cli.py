"""Issue #14's commands: ``index import DIR`` loads the seed format into the database,
``index export DIR`` writes it back, ``retrain`` refits as the one trainer when the index lives in
the database; a missing directory or an empty database is one line and exit 2."""
from __future__ import annotations

from pathlib import Path

import pytest

from support.engine import hashing_index, records
from triagebot.cli import main as cli
from triagebot.engine.index import IssueIndex
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_then_export_round_trips_the_seed_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hashing_index().save(tmp_path / "seed")
    db = str(tmp_path / "t.sqlite3")
    code, out, _ = run(capsys, "index", "import", str(tmp_path / "seed"), "--db", db)
    assert code == 0 and f"imported {len(records())} issues" in out
    assert LearnedStore(Database(db)).count() == len(records())
    code, out, _ = run(capsys, "index", "export", str(tmp_path / "out"), "--db", db)
    assert code == 0 and f"exported {len(records())} issues" in out
    assert IssueIndex.load(tmp_path / "out").keys() == IssueIndex.load(tmp_path / "seed").keys()


def test_retrain_in_the_database_is_the_one_trainer(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    hashing_index().save(tmp_path / "seed")
    db = str(tmp_path / "t.sqlite3")
    monkeypatch.setenv("TRIAGEBOT_DB", db)
    monkeypatch.setenv("TRIAGEBOT_INDEX_STORE", "database")
    monkeypatch.setenv("TRIAGEBOT_INDEX", str(tmp_path / "seed"))
    code, out, _ = run(capsys, "retrain")
    assert code == 0 and f"refitted on {len(records())} issues" in out and "classifier version" in out
    LearnedStore(Database(db)).take_lease("trainer", "another-machine", 60)
    code, _, err = run(capsys, "retrain")
    assert code == 2 and "another process holds the trainer lease" in err


def test_bad_directories_and_empty_databases_are_one_line(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "t.sqlite3")
    code, _, err = run(capsys, "index", "import", str(tmp_path / "nowhere"), "--db", db)
    assert code == 2 and "no such index directory" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "index", "import", str(tmp_path / "empty"), "--db", db)
    assert code == 2 and "cannot load index" in err
    Database(db).close()
    code, _, err = run(capsys, "index", "export", str(tmp_path / "out"), "--db", db)
    assert code == 2 and "holds no index" in err
