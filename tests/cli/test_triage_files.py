"""``triagebot triage`` with several files (one engine, each answer under its file name, a bad file
reported and the rest still triaged), an issue without a title refused, and text that is not
UTF-8 read leniently with a warning instead of refused."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from support.engine import deepspeed_issue, issue_json, write_index
from triagebot.cli import main as cli
from triagebot.cli.issue_file import read_issue


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return write_index(tmp_path_factory.mktemp("files") / "index")


def _write(tmp_path: Path, name: str, content: bytes) -> str:
    (tmp_path / name).write_bytes(content)
    return str(tmp_path / name)


def test_several_files_are_triaged_in_one_call(capsys, index_dir: Path, tmp_path: Path) -> None:
    title, body = deepspeed_issue(300)
    a = _write(tmp_path, "a.md", f"# {title}\n{body}".encode())
    b = _write(tmp_path, "b.json", issue_json("NCCL timeout in allreduce", "watchdog fired").encode())
    assert cli.main(["triage", "--index", str(index_dir), a, b]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"==> {a} <==\n") and f"\n\n==> {b} <==\n" in out
    assert cli.main(["triage", "--index", str(index_dir), "--json", a, b]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["file"] for r in rows] == [a, b] and all("stage" in r for r in rows)
    assert cli.main(["triage", "--index", str(index_dir), "--comment", a, b]) == 0
    out = capsys.readouterr().out
    assert out.count("==> ") == 2


def test_a_bad_file_among_several_is_reported_and_the_rest_triaged(capsys, index_dir: Path,
                                                                    tmp_path: Path) -> None:
    good = _write(tmp_path, "good.md", b"# NCCL timeout\nwatchdog fired on rank 3")
    empty = _write(tmp_path, "empty.md", b"")
    assert cli.main(["triage", "--index", str(index_dir), good, empty]) == 2
    out, err = capsys.readouterr()
    assert f"==> {good} <==" in out and empty not in out
    assert err == f"triagebot: error: {empty} is empty\n"
    assert cli.main(["triage", "--index", str(index_dir), empty, empty]) == 2
    assert cli.main(["triage", "--index", str(index_dir), "-", "-"]) == 2
    assert "stdin (-) can be read only once" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "fragment"), [
    (b'{"body": "NCCL timeout in allreduce"}', 'the issue has no "title"'),
    (b'{"title": "   ", "body": "NCCL timeout"}', 'the issue has no "title"'),
    (b'{"title": 7, "body": "NCCL timeout"}', 'the issue has no "title"'),
    (b"#\nNCCL timeout in allreduce", "the first line (the title) has no words"),
])
def test_an_issue_without_a_title_is_an_error(capsys, index_dir: Path, tmp_path: Path, content: bytes,
                                              fragment: str) -> None:
    path = _write(tmp_path, "notitle.json" if content.startswith(b"{") else "notitle.md", content)
    assert cli.main(["triage", "--index", str(index_dir), path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"triagebot: error: {path}: {fragment}")


def test_latin1_text_is_read_with_a_warning(capsys, caplog, index_dir: Path, tmp_path: Path) -> None:
    path = _write(tmp_path, "latin1.md", "Fehler beim Übersetzen\nRuntimeError: CUDA größe".encode("latin-1"))
    with caplog.at_level(logging.WARNING, logger="triagebot.cli.issue_file"):
        issue = read_issue(path, 1 << 20)
    assert issue.title == "Fehler beim Übersetzen" and "größe" in issue.body
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning == f"{path} is not UTF-8 text (byte 12); read as Windows-1252 / Latin-1"
    assert cli.main(["triage", "--index", str(index_dir), path]) == 0


def test_mostly_utf8_text_keeps_its_utf8_and_replaces_the_bad_bytes(caplog, tmp_path: Path) -> None:
    raw = "# Größe überschritten: NCCL\n".encode() + b"log cut here \xe2\x80"
    path = _write(tmp_path, "cut.md", raw)
    with caplog.at_level(logging.WARNING, logger="triagebot.cli.issue_file"):
        issue = read_issue(path, 1 << 20)
    assert issue.title == "Größe überschritten: NCCL" and issue.body.endswith("\ufffd")
    assert "UTF-8 with 1 undecodable byte sequence(s) replaced" in caplog.records[0].getMessage()
