"""PyGithubPort through real PyGithub against the local fake GitHub: the happy paths and the
request budget (one GET per issue read, one POST per write)."""
from __future__ import annotations

from support.github import api_requests
from support.github_fake import FakeGitHub
from triagebot.github.client import PyGithubPort, token_port


def test_get_issue_is_one_get(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 7, "NCCL timeout", "allreduce hangs", labels=("bug",), user="bob")
    issue = port.get_issue("o/r", 7)
    assert issue is not None
    assert (issue.number, issue.title, issue.body, issue.labels) == (7, "NCCL timeout", "allreduce hangs", ["bug"])
    assert issue.author == "bob" and issue.author_type == "User" and not issue.is_pull_request
    assert issue.url.endswith("/o/r/issues/7") and issue.updated_at is not None
    assert api_requests(fake) == [("GET", "/repos/o/r/issues/7")]


def test_missing_issue_is_none_and_pull_request_flagged(fake: FakeGitHub, port: PyGithubPort) -> None:
    assert port.get_issue("o/r", 404) is None
    fake.add_issue("o/r", 8, "a PR", pull_request=True)
    pr = port.get_issue("o/r", 8)
    assert pr is not None and pr.is_pull_request


def test_comments_create_edit_list(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 1, "t")
    fake.add_comment("o/r", 1, "me too", user="carol")
    cid = port.create_comment("o/r", 1, "<!-- triage-bot:v1 -->\nhello")
    port.edit_comment("o/r", cid, "<!-- triage-bot:v1 -->\nedited")
    comments = port.list_comments("o/r", 1)
    assert [(c.author, c.body) for c in comments] == [
        ("carol", "me too"), ("triagebot[bot]", "<!-- triage-bot:v1 -->\nedited")]
    assert comments[1].author_type == "Bot" and comments[1].id == cid
    assert api_requests(fake) == [
        ("POST", "/repos/o/r/issues/1/comments"),
        ("PATCH", f"/repos/o/r/issues/comments/{cid}"),
        ("GET", "/repos/o/r/issues/1/comments"),
    ]


def test_list_comments_follows_pagination(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 1, "t")
    for i in range(230):
        fake.add_comment("o/r", 1, f"c{i}")
    assert [c.body for c in port.list_comments("o/r", 1)] == [f"c{i}" for i in range(230)]
    assert len(api_requests(fake)) == 3


def test_add_labels_never_creates_labels(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 3, "t")
    port.add_labels("o/r", 3, ["bug", "invented-by-llm", "stage/S1", "bug"])
    port.add_labels("o/r", 3, ["not-a-label"])
    assert fake.labels_of("o/r", 3) == ["bug", "stage/S1"]
    assert fake.created_labels == []
    posts = [r for r in fake.requests if r.method == "POST" and r.path.endswith("/labels")]
    assert len(posts) == 1 and posts[0].json == {"labels": ["bug", "stage/S1"]}
    assert api_requests(fake).count(("GET", "/repos/o/r/labels")) == 1  # cached per port


def test_remove_label_quotes_names_and_is_idempotent(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 3, "t", labels=("stage/S1", "area: nccl"))
    port.remove_label("o/r", 3, "stage/S1")
    port.remove_label("o/r", 3, "area: nccl")
    port.remove_label("o/r", 3, "area: nccl")  # already gone -> no error
    assert fake.labels_of("o/r", 3) == []
    assert [r.path for r in fake.requests if r.method == "DELETE"] == [
        "/repos/o/r/issues/3/labels/stage%2FS1", "/repos/o/r/issues/3/labels/area%3A%20nccl",
        "/repos/o/r/issues/3/labels/area%3A%20nccl"]


def test_repo_labels_paginates(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_label("o/r", *[f"l{i}" for i in range(150)])
    labels = port.repo_labels("o/r")
    assert len(labels) == 154 and labels[-1] == "l149"
    assert api_requests(fake) == [("GET", "/repos/o/r/labels")] * 2


def test_read_file(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_file("o/r", ".github/triagebot.yml", "enabled: true\nlabels: [bug]\n# ünïcode\n")
    assert port.read_file("o/r", ".github/triagebot.yml") == "enabled: true\nlabels: [bug]\n# ünïcode\n"
    assert port.read_file("o/r", ".github/absent.yml") is None


def test_iter_closed_issues_pages_skips_prs_and_resumes(fake: FakeGitHub, port: PyGithubPort) -> None:
    for n in range(1, 251):
        fake.add_issue("o/r", n, f"i{n}", state="closed", pull_request=(n % 10 == 0),
                       state_reason="completed")
    fake.add_issue("o/r", 251, "still open")
    seen = list(port.iter_closed_issues("o/r"))
    assert [i.number for _, i in seen] == [n for n in range(1, 251) if n % 10]
    assert {p for p, _ in seen} == {0, 1, 2}
    assert all(i.state == "closed" and i.closed_at is not None for _, i in seen)
    resumed = list(port.iter_closed_issues("o/r", start_page=2))
    assert [i.number for _, i in resumed] == [n for n in range(201, 251) if n % 10]
    calls = [r for r in fake.requests if r.path == "/repos/o/r/issues"]
    assert calls[0].query["state"] == "closed" and calls[0].query["direction"] == "asc"
    assert calls[-1].query["page"] == "3"


def test_token_port_works_with_fixed_token(fake: FakeGitHub) -> None:
    fake.add_issue("o/r", 1, "t")
    p = token_port("ghp_testtoken123", fake.base_url)
    try:
        assert p.get_issue("o/r", 1) is not None
    finally:
        p.close()
    assert fake.requests[-1].headers["authorization"] == "token ghp_testtoken123"
