"""IssueIndex: keyed by (repo, number), searchable with exclusions, saved and loaded intact."""
from __future__ import annotations

import json

import numpy as np
import pytest

from support.engine import hashing_index, records
from triagebot.domain import rules
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.index import IndexError_, IssueIndex

EMB = HashingEmbedder()
NF = len(rules.FEATURE_NAMES)


def _item(number: int, repo: str = "microsoft/DeepSpeed", **extra) -> IndexedIssue:  # type: ignore[no-untyped-def]
    fields = {"title": f"issue {number}", "labels": Labels(stage="S4", symptom="4.2"), **extra}
    return IndexedIssue(repo=repo, number=number, **fields)


def _add(index: IssueIndex, items: list[IndexedIssue], texts: list[str]) -> int:
    return index.add(items, EMB.encode(texts), np.zeros((len(items), NF), np.float32))


@pytest.fixture()
def small() -> IssueIndex:
    index = IssueIndex(EMB.name, EMB.dim, NF)
    _add(index, [_item(1), _item(2), _item(1, repo="hpcaitech/ColossalAI")],
         ["nccl timeout on two nodes", "cuda out of memory zero3", "fused adam build failure"])
    return index


def test_same_number_in_two_repos_are_two_issues(small: IssueIndex) -> None:
    assert len(small) == 3
    assert small.row_of(("microsoft/DeepSpeed", 1)) != small.row_of(("hpcaitech/ColossalAI", 1))


def test_adding_a_known_issue_replaces_it(small: IssueIndex) -> None:
    new = _add(small, [_item(2, title="renamed")], ["fused adam build failure again"])
    assert new == 0 and len(small) == 3
    assert small.items[small.row_of(("microsoft/DeepSpeed", 2))].title == "renamed"
    hits = small.search(EMB.encode(["fused adam build failure again"])[0], k=10)
    assert [small.items[r].key for r, _ in hits].count(("microsoft/DeepSpeed", 2)) == 1
    assert small.items[hits[0][0]].key == ("microsoft/DeepSpeed", 2)
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)


def test_duplicates_inside_one_batch_collapse(small: IssueIndex) -> None:
    new = _add(small, [_item(7), _item(7, title="second copy")], ["a b c", "d e f"])
    assert new == 1 and len(small) == 4
    assert small.items[small.row_of(("microsoft/DeepSpeed", 7))].title == "second copy"
    assert len(small.search(EMB.encode(["d e f"])[0], k=10)) == 4


def test_search_best_first_and_bounded(small: IssueIndex) -> None:
    hits = small.search(EMB.encode(["cuda out of memory zero3"])[0], k=2)
    assert len(hits) == 2
    assert small.items[hits[0][0]].number == 2
    assert hits[0][1] >= hits[1][1]


def test_search_excludes_keys_and_still_fills_k(small: IssueIndex) -> None:
    query = EMB.encode(["cuda out of memory zero3"])[0]
    hits = small.search(query, k=2, exclude={("microsoft/DeepSpeed", 2)})
    assert len(hits) == 2
    assert ("microsoft/DeepSpeed", 2) not in {small.items[r].key for r, _ in hits}


def test_search_excluding_everything_and_empty_index(small: IssueIndex) -> None:
    query = EMB.encode(["x"])[0]
    assert small.search(query, k=5, exclude={i.key for i in small.items}) == []
    assert IssueIndex(EMB.name, EMB.dim, NF).search(query) == []


def test_update_labels_keeps_vectors(small: IssueIndex) -> None:
    key = ("microsoft/DeepSpeed", 1)
    before = small.vectors[small.row_of(key)].copy()
    fixed = _item(1, labels=Labels(stage="S2", symptom="2.2"))
    assert small.update_labels(key, fixed)
    assert small.items[small.row_of(key)].labels.stage == "S2"
    assert np.array_equal(small.vectors[small.row_of(key)], before)
    assert not small.update_labels(("microsoft/DeepSpeed", 999), fixed)


def test_save_load_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    index = hashing_index()
    index.save(tmp_path / "idx")
    loaded = IssueIndex.load(tmp_path / "idx")
    assert loaded.embedder_name == "hashing-test" and loaded.dim == index.dim
    assert loaded.n_features == NF
    assert [i.model_dump() for i in loaded.items] == [i.model_dump() for i in index.items]
    assert np.array_equal(loaded.vectors, index.vectors)
    assert np.array_equal(loaded.features, index.features)
    query = index.vectors[3]
    assert loaded.search(query, k=5) == index.search(query, k=5)
    assert IssueIndex.mtime(tmp_path / "idx") > 0
    assert IssueIndex.mtime(tmp_path / "nowhere") == 0.0


def test_saved_index_holds_no_bodies(tmp_path) -> None:  # type: ignore[no-untyped-def]
    recs = records()
    hashing_index(recs).save(tmp_path)
    meta = (tmp_path / "meta.jsonl").read_text()
    assert "body" not in json.loads(meta.splitlines()[0])
    assert recs[0].body[:40] not in meta
    assert not list(tmp_path.glob("*.npy.*"))  # no temp files left behind


def test_save_over_an_existing_index_replaces_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    recs = records()
    hashing_index(recs).save(tmp_path)
    hashing_index(recs[:5]).save(tmp_path)
    assert len(IssueIndex.load(tmp_path)) == 5


@pytest.mark.parametrize("damage", ["missing_dir", "no_manifest", "bad_manifest", "no_vectors",
                                    "short_meta", "bad_meta_line", "count_mismatch", "garbage_npy"])
def test_unusable_index_dirs_raise_index_error(tmp_path, damage: str) -> None:  # type: ignore[no-untyped-def]
    directory = tmp_path / "idx"
    hashing_index().save(directory)
    manifest = directory / "manifest.json"
    meta = directory / "meta.jsonl"
    if damage == "missing_dir":
        directory = tmp_path / "nope"
    elif damage == "no_manifest":
        manifest.unlink()
    elif damage == "bad_manifest":
        manifest.write_text("{not json")
    elif damage == "no_vectors":
        (directory / "vectors.npy").unlink()
    elif damage == "short_meta":
        meta.write_text("".join(meta.read_text().splitlines(keepends=True)[:-1]))
    elif damage == "bad_meta_line":
        meta.write_text(meta.read_text() + '{"repo": "x"}\n')
    elif damage == "count_mismatch":
        data = json.loads(manifest.read_text())
        manifest.write_text(json.dumps({**data, "count": data["count"] + 1}))
    elif damage == "garbage_npy":
        (directory / "features.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(IndexError_) as info:
        IssueIndex.load(directory)
    assert str(directory) in str(info.value)
    assert "\n" not in str(info.value)
