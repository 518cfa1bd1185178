"""Links vouched for by the same error (``relevance.same_error``): an indexed issue keeps the ids
of the diagnoses its report showed (never the words), and a new report of the same tracker with
the same error is linked to it whatever the relevance score, its fix offered to the reporter."""
from __future__ import annotations

import json
from pathlib import Path

from triagebot.domain import diagnoses
from triagebot.domain.models import Issue, LabelledIssue, Labels
from triagebot.engine import relevance
from triagebot.engine.build import build_index
from triagebot.engine.calibration import DEFAULT_TARGETS, Calibration, Outcomes
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.index import IssueIndex
from triagebot.engine.relevance import RelevanceModel
from triagebot.engine.triage import Engine
from triagebot.github.port import IssueState
from triagebot.learning import live

DS = "deepspeedai/DeepSpeed"
AIO = "[ERROR]  Unable to pre-compile async_io"
BUILD = Labels(stage="S1", symptom="1.1", root_cause="R1.3", fix_pattern="F1",
               distributed_specific=False)
OTHER = Labels(stage="S4", symptom="4.2", root_cause="R4.4", fix_pattern="F6",
               distributed_specific=True)


def record(repo: str, number: int, title: str, body: str, labels: Labels = BUILD,
           resolution: str = "Building with DS_BUILD_AIO=0 avoided the failed pre-compilation.",
           ) -> LabelledIssue:
    return LabelledIssue(repo=repo, number=number, url=f"https://github.com/{repo}/issues/{number}",
                         title=title, body=body, labels=labels, resolution=resolution)


def strict_calibration() -> Calibration:
    """Every statement and every scored link held back: only a link that vouches for itself shows."""
    never = Outcomes.of([(1.0, False)] * 40)
    nothing_relevant = RelevanceModel(weights=[0.0] * len(relevance.FEATURES), bias=-9.0)
    return Calibration(outcomes={dim: never for dim in DEFAULT_TARGETS}, relevance=nothing_relevant)


def index_of(records: list[LabelledIssue]) -> IssueIndex:
    index, _ = build_index(records, HashingEmbedder())
    index.calibration = strict_calibration()
    return index


RECORDS = [
    record(DS, 3211, "pip install from source fails", f"DS_BUILD_OPS=1\n{AIO}\n"),
    record(DS, 77, "loss spikes after resuming", "The loss jumps from 2.1 to 7.9 after a resume.",
           OTHER, "unresolved"),
    record(DS, 811, "ImportError in the launcher", "ImportError: cannot import name 'FileStore'",
           resolution="Upgrading torch to a release that has the name fixed it."),
]


def test_an_indexed_issue_keeps_only_the_ids_of_the_errors_its_report_showed() -> None:
    index = index_of(RECORDS)
    kept = {item.number: item.diagnoses for item in index.items}
    assert kept == {3211: ("libaio_missing",), 77: (), 811: ()}  # import_name: causes vary
    assert "pre-compile" not in index.items[0].model_dump_json()  # ids, never the report's words


def test_the_same_error_links_the_resolved_issue_with_its_fix_whatever_the_score() -> None:
    engine = Engine(index_of(RECORDS), HashingEmbedder())
    report = Issue(repo=DS, title="Installing 0.14 on Ubuntu breaks",
                   body=f"pip install deepspeed ends with\n```\n{AIO}\n```\ntorch 2.3, CUDA 12.1")
    similar = engine.triage(report).similar
    assert [(s.number, s.resolved, s.fix_held_back) for s in similar] == [(3211, True, False)]


def test_the_same_error_in_another_tracker_does_not_vouch() -> None:
    """Another tracker's fix names another launcher's or build's settings."""
    engine = Engine(index_of(RECORDS), HashingEmbedder())
    report = Issue(repo="huggingface/accelerate", title="accelerate launch fails to install ds",
                   body=f"```\n{AIO}\n```")
    assert engine.triage(report).similar == []


def test_an_error_whose_causes_vary_vouches_for_nothing() -> None:
    engine = Engine(index_of(RECORDS), HashingEmbedder())
    report = Issue(repo=DS, title="import fails", body="ImportError: cannot import name 'Store'")
    assert engine.triage(report).similar == []


def test_signatures_are_every_same_problem_diagnosis_in_table_order() -> None:
    text = f"{AIO}\nRuntimeError: Ninja is required to load C++ extensions\n" \
           "ImportError: cannot import name 'x'\nAssertionError: 10 is not divisible by 3"
    assert diagnoses.linking(diagnoses.find(text)) == ("ninja_missing", "libaio_missing")
    assert diagnoses.linking(diagnoses.find("")) == ()


def test_nearly_the_same_text_comes_first_then_the_same_error_then_the_score() -> None:
    import numpy as np

    ranks = [relevance.UNVOUCHED, relevance.SAME_ERROR, relevance.NEARLY_THE_SAME,
             relevance.UNVOUCHED]
    order = relevance.link_order(np.array([0.95, 0.5, 0.2, 0.4]), ranks)
    assert order.tolist() == [2, 1, 0, 3]


def test_the_same_error_ranks_below_nearly_the_same_text_and_only_in_the_same_tracker() -> None:
    item = index_of(RECORDS).items[0]  # DeepSpeed#3211, async_io
    assert relevance.vouch_rank(0.9, ("libaio_missing",), item, DS) == relevance.NEARLY_THE_SAME
    assert relevance.vouch_rank(0.3, ("libaio_missing",), item, DS) == relevance.SAME_ERROR
    assert relevance.vouch_rank(0.3, ("libaio_missing",), item, "horovod/horovod") == \
        relevance.UNVOUCHED
    assert relevance.vouch_rank(0.3, ("port_in_use",), item, DS) == relevance.UNVOUCHED


def test_a_same_error_link_still_obeys_what_may_be_linked_at_all() -> None:
    """``linkable``: a title that says nothing ("[BUG]") is never linked, vouched or not."""
    bare = [record(DS, 3211, "[BUG]", f"DS_BUILD_OPS=1\n{AIO}\n"), *RECORDS[1:]]
    engine = Engine(index_of(bare), HashingEmbedder())
    report = Issue(repo=DS, title="Installing breaks", body=f"```\n{AIO}\n```")
    assert engine.triage(report).similar == []


def test_the_links_record_takes_the_same_error_first_as_the_service_does() -> None:
    """``crossfit.OutOfFold.link_pairs`` orders and filters candidates with ``vouch_rank`` too."""
    from triagebot.engine import crossfit

    # the report and its look-alikes share every word but the error; the same error reads apart
    words = "pip install deepspeed from source on ubuntu with torch fails"
    recs = [record(DS, 1, "pip install deepspeed fails", f"{words}\n{AIO}\n")]
    recs += [record(DS, n, f"unrelated {n}", f"zz{n} qq{n}\n{AIO}\n") for n in range(2, 4)]
    recs += [record(DS, 100 + n, f"pip install deepspeed {n}", words, OTHER, "unresolved")
             for n in range(12)]
    index = index_of(recs)
    record_ = crossfit.out_of_fold(index.items, index.vectors, index.features, "hash", k=3)
    low = RelevanceModel(weights=[0.0] * len(relevance.FEATURES), bias=-9.0)
    pairs: list[tuple[float, bool]] = []
    record_.link_pairs(index.items, [0], low, pairs, [])
    nearest = record_.candidates[0][0][0]
    assert not index.items[nearest].diagnoses  # by the text alone a look-alike comes first
    assert pairs and pairs[0][1]  # the same-error candidate is the first link all the same


def test_an_index_written_before_signatures_existed_loads_with_none(tmp_path: Path) -> None:
    index_of(RECORDS).save(tmp_path)
    meta = tmp_path / "meta.jsonl"
    assert IssueIndex.load(tmp_path).items[0].diagnoses == ("libaio_missing",)
    rows = [json.loads(line) for line in meta.read_text().splitlines() if line.strip()]
    meta.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "diagnoses"}) + "\n"
                            for row in rows))
    assert all(item.diagnoses == () for item in IssueIndex.load(tmp_path).items)


def test_an_issue_closed_into_the_index_keeps_its_errors_ids() -> None:
    index = index_of(RECORDS)
    closed = IssueState(repo=DS, number=9001, title="build fails", body=f"log:\n{AIO}\n",
                        state="closed", state_reason="completed")
    assert live.add_closed_issue(index, HashingEmbedder(), closed, BUILD, "DS_BUILD_AIO=0 fixed it")
    assert {i.number: i.diagnoses for i in index.items}[9001] == ("libaio_missing",)


def test_an_issue_the_report_names_is_not_linked_back() -> None:
    engine = Engine(index_of(RECORDS), HashingEmbedder())
    body = f"pip install deepspeed ends with\n```\n{AIO}\n```\n"
    linked = engine.triage(Issue(repo=DS, title="Installing 0.14 breaks", body=body)).similar
    assert [s.number for s in linked] == [3211]  # the same error vouches for it
    again = Issue(repo=DS, title="Installing 0.14 breaks",
                  body=body + "Like #3211, but its fix did not help.")
    assert engine.triage(again).similar == []
