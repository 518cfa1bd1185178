"""The review page through Flask's test client (fast): login, CSRF, decisions, stats, and the
done-when test - a correction made on the page changes the next triage of a similar issue."""
from __future__ import annotations

import re
import struct
import zlib

import pytest
from pydantic import SecretStr

from support.review import TOKEN, closed_issue, csrf_of, live_engine, log_in, make_index, settings
from triagebot.cli import main as cli
from triagebot.domain import taxonomy
from triagebot.domain.models import Issue
from triagebot.learning import live as learning
from triagebot.review import charts
from triagebot.service.app import create_app
from triagebot.settings import ConfigError
from triagebot.store.records import Store

HTML = {"Accept": "text/html"}


@pytest.fixture
def env(tmp_path):
    index_dir = make_index(tmp_path / "index")
    engine = live_engine(index_dir)
    store = Store(tmp_path / "t.sqlite3")
    # an issue the sync indexed with the bot's guess: on the page for review, and a neighbour
    target = closed_issue(77, "cuda out of memory with zero3 offload optimizer cpu memory grows")
    triage = engine.triage(Issue(repo="org/repo", number=77, title=target.title, body=target.body))
    store.save_triage(triage, None, None)
    with engine.live.writing() as index:  # what ``index sync`` does for an unlabelled issue
        learning.add_closed_issue(index, engine.embedder, target, learning.labels_of(triage)[0],
                                  resolution="Lowering the bucket size fixed it.", status="predicted")
    app = create_app(settings(tmp_path, index_dir), store=store)
    return {"app": app, "client": app.test_client(), "store": store, "engine": engine,
            "index_dir": index_dir}




def _decide(client, csrf, dimension, action="accept", choice="", number=77):
    return client.post("/review/decide", data={"csrf": csrf, "repo": "org/repo", "number": number,
                                               "dimension": dimension, "action": action,
                                               "choice": choice})


def test_requests_without_a_session_are_refused(env):
    client = env["client"]
    assert client.get("/review", headers=HTML).status_code == 302
    assert client.get("/review").status_code == 401
    assert client.get("/review/stats").status_code == 401
    assert _decide(client, "x", "stage").status_code == 401
    assert env["store"].feedback("org/repo", 77) == []


def test_login_needs_the_token_and_a_csrf_token(env):
    client = env["client"]
    page = client.get("/review/login").get_data(as_text=True)
    assert client.post("/review/login", data={"token": "wrong", "csrf": csrf_of(page)}).status_code == 401
    assert client.post("/review/login", data={"token": TOKEN}).status_code == 403
    resp = client.post("/review/login", data={"token": TOKEN, "csrf": csrf_of(page)})
    cookie = resp.headers["Set-Cookie"]
    assert "SameSite=Strict" in cookie and "HttpOnly" in cookie
    assert "default-src 'none'" in resp.headers["Content-Security-Policy"]


def test_decisions_need_csrf_and_valid_ids(env):
    client = env["client"]
    csrf = log_in(client)
    assert _decide(client, "wrong-token", "stage").status_code == 403
    assert _decide(client, csrf, "stage", "correct", "S9").status_code == 400
    assert _decide(client, csrf, "nonsense").status_code == 400
    stage = env["store"].get_triage("org/repo", 77).triage.stage.id
    foreign = "2.1" if stage != "S2" else "4.2"
    assert _decide(client, csrf, "symptom", "correct", foreign).status_code == 400
    assert _decide(client, csrf, "stage", number=5).status_code == 404
    assert env["store"].feedback("org/repo", 77) == []


def test_accept_and_correct_record_feedback_and_update_the_index(env):
    client, store = env["client"], env["store"]
    csrf = log_in(client)
    stored = store.get_triage("org/repo", 77).triage
    assert _decide(client, csrf, "stage").status_code == 302
    options = [o for o in ("F1", "F2", "F3") if o != stored.fix_pattern.id]
    assert _decide(client, csrf, "fix_pattern", "correct", options[0]).status_code == 302
    fbs = store.feedback("org/repo", 77)
    assert [(f.dimension, f.old_id, f.new_id, f.who, f.source) for f in fbs] == [
        ("stage", stored.stage.id, stored.stage.id, "admin", "page"),
        ("fix_pattern", stored.fix_pattern.id, options[0], "admin", "page")]
    env["engine"].refresh()  # what the worker's engine does at the start of its next job
    item = env["engine"].index.items[env["engine"].index.row_of(("org/repo", 77))]
    assert item.labels.fix_pattern == options[0] and item.status == "confirmed"
    page = client.get("/review", headers=HTML).get_data(as_text=True)
    assert "(accepted)" in page and "(corrected)" in page
    assert "org/repo#77" in client.get("/review?filter=pending").get_data(as_text=True)
    stats = client.get("/review/stats?dimension=fix_pattern").get_data(as_text=True)
    assert "2 decisions" in stats and "<svg" in stats
    assert re.search(r"<td>stage</td><td class=\"rate\">100%", stats)
    assert re.search(r"<td>fix_pattern</td><td class=\"rate\">0%", stats)


def test_a_correction_on_the_page_changes_the_next_triage_of_a_similar_issue(env):
    client, engine = env["client"], env["engine"]
    similar = Issue(repo="org/repo", number=88, title="cuda out of memory zero3 offload",
                    body="optimizer cpu memory grows with zero3 offload")
    before = {s.number: s for s in engine.triage(similar).similar}
    assert 77 in before and before[77].status == "predicted"
    csrf = log_in(client)
    stage = env["store"].get_triage("org/repo", 77).triage.stage.id
    choice = "4.11" if stage == "S4" else "unknown"
    assert _decide(client, csrf, "symptom", "correct", choice).status_code == 302
    engine.refresh()  # the start of the worker's next job: the one place an engine reloads
    index = engine.live.current()
    item = index.items[index.row_of(("org/repo", 77))]
    assert item.labels.symptom == choice and item.status == "confirmed"
    after = {s.number: s for s in engine.triage(similar).similar}  # same engine
    if 77 in after:
        assert after[77].labels.symptom == choice and after[77].status == "confirmed"
    else:  # now known to be a hang, it is no longer offered for an issue the model is sure is OOM
        assert engine.triage(similar).symptom.id not in (choice, taxonomy.UNKNOWN)
    assert before[77].labels.symptom != choice


def test_short_admin_token_is_a_config_error(tmp_path):
    s = settings(tmp_path, make_index(tmp_path / "i"))
    s = s.model_copy(update={"admin_token": SecretStr("short")})
    with pytest.raises(ConfigError):
        create_app(s, store=Store(tmp_path / "x.sqlite3"))


def test_report_prints_and_writes_html_and_png(env, tmp_path, capsys):
    client = env["client"]
    _decide(client, log_in(client), "stage")
    db = str(tmp_path / "t.sqlite3")
    code = cli.main(["report", "--db", db, "--html", str(tmp_path / "r.html"),
                     "--png", str(tmp_path / "r.png")])
    out = capsys.readouterr().out
    assert code == 0 and "1 review decisions" in out and "stage" in out
    assert "<svg" in (tmp_path / "r.html").read_text()
    width, height = _png_size((tmp_path / "r.png").read_bytes())
    assert width == height and width > 20
    assert cli.main(["report", "--db", str(tmp_path / "missing.db")]) == 2


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    idat = data[data.index(b"IDAT") + 4:data.index(b"IEND") - 8]
    assert len(zlib.decompress(idat)) == height * (1 + 3 * width)
    return width, height


def test_confusion_svg_escapes_labels():
    svg = charts.confusion_svg(["<x>", "S1"], [[1, 0], [2, 3]])
    assert "<x>" not in svg and "&lt;x&gt;" in svg


def test_retrain_reports_and_running_engines_refit(env, capsys):
    engine = env["engine"]
    old = engine.engine.classifier
    assert cli.main(["retrain", "--index", str(env["index_dir"])]) == 0
    assert "refitted on" in capsys.readouterr().out
    engine.refresh()  # a running worker's engine, at the start of its next job
    assert engine.engine.classifier is not old


def test_service_indexer_adds_closed_issues_predicted_or_confirmed(env):
    engine, store = env["engine"], env["store"]
    indexer = learning.make_indexer(engine, store)
    indexer(closed_issue(90, "training hangs at allreduce step"), None)
    item = engine.index.items[engine.index.row_of(("org/repo", 90))]
    assert item.status == "predicted" and store.get_triage("org/repo", 90).author is None
    client = env["client"]
    _decide(client, log_in(client), "stage", number=90)
    indexer(closed_issue(90, "training hangs at allreduce step"), item.labels)
    assert engine.index.items[engine.index.row_of(("org/repo", 90))].status == "confirmed"
    assert sum(i.key == ("org/repo", 90) for i in engine.index.items) == 1


def test_stated_record_counts_precision_over_what_the_comment_asserted():
    from triagebot.review.data import stated_record

    rows = {r.dimension: r for r in stated_record([
        ("stage", "S4", "S4"), ("stage", "S3", "S4"), ("stage", None, "S5"),
        ("is_bug", False, "no"), ("distributed_specific", True, "yes"), ("symptom", None, "4.2")])}
    assert (rows["stage"].right, rows["stage"].stated, rows["stage"].reviewed) == (1, 2, 3)
    assert rows["stage"].precision == 0.5 and abs(rows["stage"].coverage - 2 / 3) < 1e-9
    assert rows["is_bug"].precision == 1.0 and rows["distributed_specific"].precision == 1.0
    assert rows["symptom"].precision is None and rows["symptom"].coverage == 0.0
    assert "root_cause" not in rows


def test_report_shows_precision_of_what_the_comment_stated(env, tmp_path, capsys):
    client = env["client"]
    _decide(client, log_in(client), "stage")
    stored = env["store"].get_triage("org/repo", 77).triage
    cli.main(["report", "--db", str(tmp_path / "t.sqlite3")])
    out = capsys.readouterr().out
    assert "what the comment stated" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("stage ") and "precision" in x)
    expected = "(1/1 stated)" if stored.stated("stage") is not None else "(0/0 stated)"
    assert expected in line and "of 1 reviewed" in line
