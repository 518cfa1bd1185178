"""Visibility enforced at the neighbour search: a private repository's issues never reach another
repository's triage (vote, similar issues, LLM prompt); the search widens past filtered rows;
removing and retagging items leaves nothing behind on disk; old index files load as public."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from support.engine import permissive_calibration, records
from triagebot.domain.models import Issue, LabelledIssue, Labels, Similar, Triage
from triagebot.domain.visibility import Viewer, visible_to
from triagebot.engine.build import build_index
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.index import IssueIndex
from triagebot.engine.triage import Engine

TEXT = "flibbergrad allreduce hangs forever on the quasar cluster after step 1200 with zero3"
SECRET_TITLE = "quasar cluster flibbergrad hang (internal XJ-9)"
LABELS = Labels(stage="S4", symptom="4.11", root_cause="R4.7", fix_pattern="F3")


def labelled(repo: str, number: int, title: str, **fields) -> LabelledIssue:
    return LabelledIssue(repo=repo, number=number, title=title, body=TEXT, labels=LABELS,
                         state="closed", close_reason="completed",
                         resolution="Raising the NCCL timeout fixed it.", **fields)


def corpus(extra: list[LabelledIssue]) -> IssueIndex:
    """Too small to calibrate itself: a permissive calibration lets its neighbours be linked."""
    index, _ = build_index(records() + extra, HashingEmbedder())
    index.calibration = permissive_calibration()
    return index


def private_and_public() -> list[LabelledIssue]:
    return [labelled("acme/secret", 5, SECRET_TITLE, visibility="private"),
            labelled("pub/lic", 6, "flibbergrad hang on quasar (public control)")]


class Recording:
    """A refiner that records the neighbours it was given (what a prompt would contain)."""

    def __init__(self) -> None:
        self.seen: list[list[Similar]] = []

    def refine(self, issue: Issue, offline: Triage, neighbours: list[Similar]) -> Triage:
        self.seen.append(neighbours)
        return offline


def keys(triage: Triage) -> set[tuple[str, int]]:
    return {(s.repo, s.number) for s in triage.similar}


def test_private_issue_is_a_neighbour_only_in_its_own_repository() -> None:
    engine = Engine(corpus(private_and_public()), HashingEmbedder())
    elsewhere = engine.triage(Issue(repo="other/proj", number=1, title="flibbergrad hang", body=TEXT))
    assert ("pub/lic", 6) in keys(elsewhere)  # the control is linked: the check is not vacuous
    assert ("acme/secret", 5) not in keys(elsewhere)
    assert all(SECRET_TITLE not in s.title for s in elsewhere.similar)
    home = engine.triage(Issue(repo="acme/secret", number=9, title="flibbergrad hang", body=TEXT))
    assert ("acme/secret", 5) in keys(home)


def test_the_neighbour_vote_never_counts_hidden_items() -> None:
    index = corpus(private_and_public())
    vector = HashingEmbedder().encode([TEXT])[0]
    viewer = Viewer.of("other/proj")
    hits = index.search(vector, 15, visible=lambda item: visible_to(item, viewer))
    assert all(index.items[row].visibility == "public" for row, _ in hits)
    assert len(hits) == 15


def test_search_widens_past_a_crowd_of_hidden_items() -> None:
    crowd = [labelled("acme/secret", 100 + i, f"hang {i}", visibility="private") for i in range(40)]
    index = corpus(crowd + [labelled("pub/lic", 6, "public control")])
    vector = HashingEmbedder().encode([TEXT])[0]
    unfiltered = index.search(vector, 5)
    assert all(index.items[row].visibility == "private" for row, _ in unfiltered)
    shown = index.search(vector, 5, visible=lambda item: item.visibility == "public")
    assert len(shown) == 5 and index.items[shown[0][0]].key == ("pub/lic", 6)


def test_owner_shared_private_issue_is_shown_but_never_prompted_elsewhere() -> None:
    shared = labelled("acme/secret", 5, SECRET_TITLE, visibility="private")
    index = corpus([shared, labelled("pub/lic", 6, "public control")])
    row = index.row_of(("acme/secret", 5))
    index.items[row] = index.items[row].model_copy(update={"shared_with": "owner"})
    refiner = Recording()
    engine = Engine(index, HashingEmbedder(), refiner=refiner)
    sibling = engine.triage(Issue(repo="acme/public", number=1, title="flibbergrad hang", body=TEXT))
    assert ("acme/secret", 5) in keys(sibling)  # shown on a sibling of the same owner ...
    assert ("acme/secret", 5) not in {(s.repo, s.number) for s in refiner.seen[-1]}  # ... not prompted
    assert ("pub/lic", 6) in {(s.repo, s.number) for s in refiner.seen[-1]}
    engine.triage(Issue(repo="acme/secret", number=9, title="flibbergrad hang", body=TEXT))
    assert ("acme/secret", 5) in {(s.repo, s.number) for s in refiner.seen[-1]}  # own repository


def test_no_consent_means_no_model_call() -> None:
    refiner = Recording()
    engine = Engine(corpus(private_and_public()), HashingEmbedder(), refiner=refiner)
    engine.triage(Issue(repo="acme/secret", number=9, title="x", body=TEXT), llm=False)
    assert refiner.seen == []


def test_removed_and_retagged_items_leave_nothing_on_disk(tmp_path: Path) -> None:
    index = corpus(private_and_public())
    before = len(index)
    assert index.remove({("acme/secret", 5), ("nope/nope", 1)}) == 1
    updated, removed = index.retag(lambda i: i.model_copy(update={"repo": "pub/renamed"})
                                   if i.repo == "pub/lic" else i)
    assert (updated, removed, len(index)) == (1, 0, before - 1)
    index.save(tmp_path)
    assert SECRET_TITLE not in (tmp_path / "meta.jsonl").read_text()
    loaded = IssueIndex.load(tmp_path)
    assert loaded.row_of(("pub/renamed", 6)) is not None and loaded.row_of(("pub/lic", 6)) is None
    assert len(np.load(tmp_path / "vectors.npy")) == before - 1
    vector = HashingEmbedder().encode([TEXT])[0]
    assert loaded.items[loaded.search(vector, 1)[0][0]].key == ("pub/renamed", 6)


def test_a_moved_item_wins_over_a_stale_one_with_its_new_key() -> None:
    index = corpus([labelled("a/b", 1, "old"), labelled("c/d", 1, "stale copy")])
    index.retag(lambda i: i.model_copy(update={"repo": "c/d"}) if i.repo == "a/b" else i)
    assert [i.title for i in index.items if i.key == ("c/d", 1)] == ["old"]


def test_index_files_written_before_visibility_load_as_public(tmp_path: Path) -> None:
    corpus([]).save(tmp_path)
    meta = tmp_path / "meta.jsonl"
    rows = [json.loads(line) for line in meta.read_text().splitlines()]
    for row in rows:
        for name in ("visibility", "owner", "installation_id", "shared_with"):
            row.pop(name)
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows))
    loaded = IssueIndex.load(tmp_path)
    assert {i.visibility for i in loaded.items} == {"public"}
    assert all(i.owner == i.repo.split("/")[0] for i in loaded.items)
