"""``index sync`` records each synced issue's visibility from the API (a private repository's
issues stay home) and asks the LLM for resolution summaries only with the repository's consent."""
from __future__ import annotations

import pytest

from support.review import PagedGitHub, closed_issue, live_engine, make_index, reply
from triagebot.domain.repo_config import CONFIG_PATH
from triagebot.learning.sync import Syncer

MAINT = "Fixed by lowering reduce_bucket_size in the ZeRO config."


def _sync(tmp_path, private: bool, config: str = "", operator: str = "off"):  # type: ignore[no-untyped-def]
    gh = PagedGitHub([closed_issue(1, "cuda out of memory with zero3 offload")], per_page=3)
    gh.files[("org/repo", CONFIG_PATH)] = config
    gh.comments[("org/repo", 1)] = [reply(MAINT, cid=2)]
    if private:
        gh.private_repos.add("org/repo")
    asked: list[str] = []

    def summarize(title: str, discussion: str) -> str:
        asked.append(discussion)
        return "Lowering reduce_bucket_size in the ZeRO config fixed it."

    engine = live_engine(make_index(tmp_path / "index"))
    Syncer(gh, engine, "org/repo", tmp_path / "s.json", summarize=summarize,
           llm_private_repos=operator).run()
    item = next(i for i in live_engine(tmp_path / "index").index.items if i.repo == "org/repo")
    return item, asked


def test_synced_issues_of_a_private_repository_are_private(tmp_path) -> None:
    item, _ = _sync(tmp_path, private=True, config="private_issues_shown_to: owner\n")
    assert (item.visibility, item.owner, item.shared_with) == ("private", "org", "owner")


@pytest.mark.parametrize(("private", "config", "operator", "asked"), [
    (False, "", "off", True), (False, "llm: off\n", "on", False),
    (True, "", "off", False), (True, "llm: on\n", "opt-in", True), (True, "", "on", True),
])
def test_resolution_summaries_only_with_consent(tmp_path, private, config, operator, asked) -> None:
    item, calls = _sync(tmp_path, private, config, operator)
    assert bool(calls) is asked
    assert item.visibility == ("private" if private else "public")
