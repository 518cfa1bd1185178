"""The CLI against a hashing-embedder index: documented JSON shapes, and every user mistake ending
in exit status 2 with exactly one "triagebot: error:" line and no traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.engine import DATA, deepspeed_issue, issue_json, records, write_index
from triagebot.cli import main as cli
from triagebot.cli.issue_file import read_issue
from triagebot.comment.render import MARKER
from triagebot.engine import embed

ROOT = Path(__file__).resolve().parents[2]
PRED_KEYS = {"id", "name", "confidence"}
SIMILAR_KEYS = {"repo", "number", "url", "title", "score", "labels", "resolution"}
SCORE_KEYS = {"n", "accuracy", "forced_accuracy", "macro_f1", "kappa", "coverage", "covered_accuracy"}
MB = 1024 * 1024


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    return write_index(tmp_path_factory.mktemp("cli") / "index")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    base = tmp_path_factory.mktemp("inputs")
    title, body = deepspeed_issue(300)
    big_title, big_body = deepspeed_issue(40_000)
    contents: dict[str, bytes] = {
        "good.json": issue_json(title, body, repo="microsoft/DeepSpeed", number=9001).encode(),
        "good.md": f"# {title}\n{body}".encode(),
        "empty.md": b"",
        "blank.md": b"   \n\n\t\n",
        "binary.bin": bytes(range(256)) * 64,
        "latin1.md": "Fehler beim Übersetzen".encode("latin-1"),
        "wrong.json": b'{"title": "NCCL timeout", "body": ',
        "array.json": json.dumps([{"title": "a", "body": "b"}]).encode(),
        "nothing.json": b'{"title": "", "body": null}',
        "badtype.json": b'{"title": "x", "number": "seven"}',
        "five_mb.md": f"# {big_title}\n{big_body}".encode()[: 5 * MB],
        "nine_mb.md": b"# huge\n" + b"RuntimeError: NCCL timeout on rank 3\n" * (9 * MB // 37 + 1),
        "bad_data.jsonl": (DATA.read_text().splitlines()[0] + "\n{oops\n").encode(),
    }
    for name, content in contents.items():
        (base / name).write_bytes(content)
    assert (base / "five_mb.md").stat().st_size > 4.9 * MB
    assert (base / "nine_mb.md").stat().st_size > 9 * MB
    return {name: base / name for name in contents}


def run_main(capsys, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_error_line(err: str, *fragments: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("triagebot: error:"), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, err)


# -- triage -----------------------------------------------------------------------------------------

def test_triage_json_shape(capsys, index_dir: Path, files) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_main(capsys, "triage", "--index", str(index_dir), "--json", str(files["good.json"]))
    assert code == 0 and err == ""
    data = json.loads(out)
    for dim in ("stage", "symptom", "root_cause", "fix_pattern", "distributed_specific"):
        assert PRED_KEYS <= set(data[dim]), dim
        assert isinstance(data[dim]["confidence"], float)
    assert data["stage"]["id"] in {"S1", "S2", "S3", "S4", "S5"}
    assert isinstance(data["similar"], list) and data["similar"]
    known = {(r.repo, r.number) for r in records()}
    for similar in data["similar"]:
        assert SIMILAR_KEYS <= set(similar)
        assert (similar["repo"], similar["number"]) in known
        assert set(similar["labels"]) >= {"stage", "symptom", "root_cause", "fix_pattern"}
    assert isinstance(data["missing_info"], list) and isinstance(data["environment"], dict)


def test_triage_markdown_text_and_comment(capsys, index_dir: Path, files) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_main(capsys, "triage", "--index", str(index_dir), str(files["good.md"]))
    assert code == 0 and out.startswith("Stage:")
    code, out, _ = run_main(capsys, "triage", "--index", str(index_dir), "--comment", str(files["good.md"]))
    assert code == 0 and out.startswith(MARKER)


def test_triage_reads_stdin(capsys, monkeypatch, index_dir: Path) -> None:  # type: ignore[no-untyped-def]
    class Stdin:
        buffer = __import__("io").BytesIO(b"# NCCL timeout on 2 nodes\nWatchdog caught collective timeout")

    monkeypatch.setattr(sys, "stdin", Stdin)
    code, out, _ = run_main(capsys, "triage", "--index", str(index_dir), "--json", "-")
    assert code == 0 and json.loads(out)["similar"]


def test_triage_uses_triagebot_index_env(capsys, monkeypatch, index_dir: Path, files) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TRIAGEBOT_INDEX", str(index_dir))
    code, out, _ = run_main(capsys, "triage", "--json", str(files["good.json"]))
    assert code == 0 and "stage" in json.loads(out)


def test_five_megabytes_of_logs_is_triaged(capsys, index_dir: Path, files) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_main(capsys, "triage", "--index", str(index_dir), "--json", str(files["five_mb.md"]))
    assert code == 0, err
    assert json.loads(out)["stage"]["id"]


def test_long_body_keeps_the_end_of_the_log(files) -> None:  # type: ignore[no-untyped-def]
    issue = read_issue(str(files["five_mb.md"]), cli.MAX_INPUT_BYTES)
    tail = files["five_mb.md"].read_text(encoding="utf-8", errors="ignore").rstrip()[-200:]
    assert issue.body.endswith(tail)
    assert issue.body.startswith("<!--")


@pytest.mark.parametrize(("name", "fragment"), [
    ("empty.md", "is empty"),
    ("blank.md", "is empty"),
    ("binary.bin", "binary"),
    ("wrong.json", "invalid JSON at line 1"),
    ("array.json", "expected a JSON object"),
    ("nothing.json", "neither a title nor a body"),
    ("badtype.json", "number"),
    ("nine_mb.md", "larger than 8 MiB"),
])
def test_bad_issue_files(capsys, index_dir: Path, files, name: str, fragment: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_main(capsys, "triage", "--index", str(index_dir), str(files[name]))
    assert code == 2 and out == ""
    assert_one_error_line(err, fragment, str(files[name]))


def test_missing_issue_file_and_directory(capsys, index_dir: Path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_main(capsys, "triage", "--index", str(index_dir), str(tmp_path / "nope.md"))
    assert code == 2
    assert_one_error_line(err, "cannot read", "nope.md")
    code, _, err = run_main(capsys, "triage", "--index", str(index_dir), str(tmp_path))
    assert code == 2
    assert_one_error_line(err, "cannot read")


def test_missing_index_dir(capsys, files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_main(capsys, "triage", "--index", str(tmp_path / "no-index"), str(files["good.md"]))
    assert code == 2
    assert_one_error_line(err, "cannot load index", "no-index")


def test_damaged_index_dir(capsys, files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    damaged = write_index(tmp_path / "idx")
    with open(damaged / "meta.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"repo": "x"}\n')
    code, _, err = run_main(capsys, "triage", "--index", str(damaged), str(files["good.md"]))
    assert code == 2
    assert_one_error_line(err, "cannot load index")


def test_llm_flag_without_configuration(capsys, monkeypatch, index_dir: Path, files) -> None:  # type: ignore[no-untyped-def]
    for name in list(os.environ):
        if name.startswith("TRIAGEBOT_LLM") or name == "OPENAI_API_KEY":
            monkeypatch.delenv(name)
    code, _, err = run_main(capsys, "triage", "--index", str(index_dir), "--llm", str(files["good.md"]))
    assert code == 2
    assert_one_error_line(err, "TRIAGEBOT_LLM_MODEL")


# -- eval / index -----------------------------------------------------------------------------------

def test_eval_json_is_exactly_one_object(capsys, index_dir: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_main(capsys, "eval", "--index", str(index_dir), "--data", str(DATA), "--json")
    assert code == 0 and err == ""
    assert out.count("\n") == 1 and out.endswith("\n")
    data = json.loads(out)
    assert data["n"] == len(records())
    for dim in ("stage", "symptom", "root_cause", "fix_pattern"):
        assert set(data[dim]) == SCORE_KEYS, dim
    assert set(data["retrieval"]) == {"hit_at_5"}


def test_eval_text_report_notes_overlap(capsys, index_dir: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_main(capsys, "eval", "--index", str(index_dir), "--data", str(DATA))
    assert code == 0
    assert out.startswith(f"n = {len(records())}") and "retrieval hit@5" in out
    assert "are in the index" in err


def test_eval_cross_validation(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(embed, "default_embedder", lambda *a, **k: embed.HashingEmbedder())  # no model in fast tests
    code, out, err = run_main(capsys, "eval", "--cv", "2", "--data", str(DATA), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["n"] == len(records()) and set(data["stage"]) == SCORE_KEYS
    assert set(data["baselines"]["stage"]) == {"majority", "keyword_rules"}


def test_eval_predictions_backtest_writes_what_the_comment_would_state(capsys, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(embed, "default_embedder", lambda *a, **k: embed.HashingEmbedder())
    out_file = tmp_path / "pred.jsonl"
    code, out, _ = run_main(capsys, "eval", "--cv", "2", "--data", str(DATA), "--predictions", str(out_file))
    assert code == 0 and "what the comment states" in out
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == len(records())
    keys = {"stage", "symptom", "root_cause", "fix_pattern", "distributed_specific", "is_bug"}
    for row in rows:
        assert set(row) == {"repo", "number", "posted", "labelled", "stated", "forced", "similar", "missing",
                            "comment_chars", "comment"}
        assert (row["comment"] is None) == (row["comment_chars"] == 0)
        assert set(row["stated"]) == set(row["forced"]) == keys
        for dim in keys:  # a stated label is always the forced choice
            assert row["stated"][dim] is None or row["stated"][dim] == row["forced"][dim]
        assert (row["comment_chars"] > 0) == row["posted"]
        assert all(set(s) == {"repo", "number"} for s in row["similar"])


def test_eval_fold_vectors_that_do_not_fit_are_one_error(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "folds.json").write_text("[[0, 1]]")
    code, _, err = run_main(capsys, "eval", "--cv", "2", "--data", str(DATA), "--fold-vectors", str(tmp_path))
    assert code == 2
    assert_one_error_line(err, "--fold-vectors:")


@pytest.mark.parametrize("folds", ["1", "-3", "33"])
def test_eval_bad_fold_counts(capsys, folds: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_main(capsys, "eval", "--cv", folds, "--data", str(DATA))
    assert code == 2 and out == ""
    assert_one_error_line(err, "--cv needs 2..32 folds")


def test_eval_bad_data_line_names_file_and_line(capsys, index_dir: Path, files) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_main(capsys, "eval", "--index", str(index_dir), "--data", str(files["bad_data.jsonl"]))
    assert code == 2
    assert_one_error_line(err, f"{files['bad_data.jsonl']}:2:")


def test_index_build_bad_data_fails_before_loading_a_model(capsys, files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_main(capsys, "index", "build", "--data", str(files["bad_data.jsonl"]),
                            "--out", str(tmp_path / "out"))
    assert code == 2
    assert_one_error_line(err, f"{files['bad_data.jsonl']}:2: not JSON")
    assert not (tmp_path / "out").exists()


def test_index_build_and_info(capsys, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(embed, "default_embedder", lambda *a, **k: embed.HashingEmbedder())
    code, out, _ = run_main(capsys, "index", "build", "--data", str(DATA), "--out", str(tmp_path / "i"))
    assert code == 0 and out.startswith(f"indexed {len(records())} issues")
    code, out, _ = run_main(capsys, "index", "info", "--index", str(tmp_path / "i"))
    assert code == 0
    assert out.splitlines()[0] == f"{len(records())} issues, embedder hashing-test (256 dims)"
    assert "  microsoft/DeepSpeed: 20" in out


def test_no_command_prints_help(capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main([]) == 2
    assert "usage: triagebot" in capsys.readouterr().out


# -- as a real process --------------------------------------------------------------------------------

def run_process(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGEBOT_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "triagebot", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_process_triage_json(index_dir: Path, files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = run_process("triage", "--index", str(index_dir), "--json", str(files["good.json"]), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stage"]["id"]


@pytest.mark.parametrize(("argv", "fragment"), [
    (("triage", "--index", "@index", "@nine_mb.md"), "larger than 8 MiB"),
    (("triage", "--index", "@index", "@binary.bin"), "binary"),
    (("triage", "--index", "@missing", "@good.md"), "cannot load index"),
    (("eval", "--data", "@bad_data.jsonl", "--index", "@index", "--json"), "bad_data.jsonl:2:"),
    (("eval", "--cv", "1", "--data", str(DATA)), "--cv needs"),
])
def test_process_errors_are_one_line(index_dir: Path, files, tmp_path, argv, fragment: str) -> None:  # type: ignore[no-untyped-def]
    names = {"index": index_dir, "missing": tmp_path / "missing", **files}
    done = run_process(*(str(names[a[1:]]) if a.startswith("@") else a for a in argv), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert_one_error_line(done.stderr, fragment)
