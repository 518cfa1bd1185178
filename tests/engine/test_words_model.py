"""The words model: hashed word counts beside the embedding, fitted at build time and kept in the
calibration record (an index keeps no texts)."""
from __future__ import annotations

import numpy as np

from triagebot.domain.models import LabelledIssue, Labels
from triagebot.engine import lexical
from triagebot.engine.build import build_index
from triagebot.engine.calibration import Calibration
from triagebot.engine.classify import Classifier, fit_words
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.index import IssueIndex

HANG = Labels(stage="S4", symptom="4.11", root_cause="R4.2", fix_pattern="F3",
              distributed_specific=True)
OOM = Labels(stage="S4", symptom="4.2", root_cause="R4.3", fix_pattern="F1",
             distributed_specific=False)


def _issues(n: int = 60) -> list[LabelledIssue]:
    """Half hang reports, half out-of-memory reports, told apart by their words only."""
    out = []
    for i in range(n):
        hang = i % 2 == 0
        title = (f"training hangs forever at step {i}" if hang
                 else f"CUDA out of memory error at step {i}")
        body = ("all ranks stuck, no progress, the job hangs waiting" if hang
                else "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")
        out.append(LabelledIssue(repo="o/r", number=i + 1, title=title, body=body,
                                 labels=HANG if hang else OOM, url=f"https://github.com/o/r/issues/{i + 1}"))
    return out


def test_hashed_rows_are_unit_length_and_the_same_for_the_same_text() -> None:
    rows = lexical.hashed(["NCCL timeout after 420 steps", "NCCL timeout after 420 steps", ""])
    assert rows.shape == (3, lexical.N_FEATURES)
    assert np.allclose(np.linalg.norm(rows[:2], axis=1), 1.0)
    assert np.array_equal(rows[0], rows[1])
    assert not rows[2].any()  # an empty text is all zeros, not NaN


def test_the_words_model_learns_the_words_that_name_a_symptom() -> None:
    issues = _issues()
    model = fit_words([f"{i.title}\n{i.body}" for i in issues], [i.to_indexed() for i in issues])
    hang, oom = model.distributions(["the run hangs forever, all ranks stuck",
                                     "CUDA out of memory when I raise the batch size"])
    assert hang["symptom"]["4.11"] > 0.6
    assert oom["symptom"]["4.2"] > 0.6
    assert hang["distributed_specific"]["yes"] > oom["distributed_specific"]["yes"]


def test_the_stored_words_model_holds_numbers_not_the_issues_words() -> None:
    issues = _issues()
    model = fit_words([f"{i.title}\n{i.body}" for i in issues], [i.to_indexed() for i in issues])
    stored = Calibration(words=model).model_dump_json()
    for word in ("hangs", "stuck", "memory", "allocate", "RuntimeError"):
        assert word not in stored


def test_the_words_model_survives_the_calibration_records_round_trip() -> None:
    issues = _issues()
    model = fit_words([f"{i.title}\n{i.body}" for i in issues], [i.to_indexed() for i in issues])
    back = Calibration.model_validate_json(Calibration(words=model).model_dump_json()).words
    assert back is not None
    text = ["training hangs at step 3"]
    before, after = model.distributions(text)[0]["symptom"], back.distributions(text)[0]["symptom"]
    assert before.keys() == after.keys()
    assert all(abs(before[k] - after[k]) < 1e-6 for k in before)


def test_the_classifier_mixes_in_the_words_only_when_it_is_given_the_text() -> None:
    issues = _issues()
    items = [i.to_indexed() for i in issues]
    words = fit_words([f"{i.title}\n{i.body}" for i in issues], items)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(items), 8)).astype(np.float32)  # embeddings that know nothing
    features = np.zeros((len(items), 2), np.float32)
    blind = Classifier.fit(vectors, features, items)
    reading = Classifier.fit(vectors, features, items, words)
    query = rng.normal(size=(1, 8)).astype(np.float32)
    text = ["my job hangs forever, all ranks stuck"]
    without = reading.distributions(query, features[:1])[0]["symptom"]
    assert without == blind.distributions(query, features[:1])[0]["symptom"]
    assert reading.distributions(query, features[:1], text)[0]["symptom"]["4.11"] > without["4.11"]


def test_an_index_built_from_labelled_issues_keeps_its_words_model_when_saved(tmp_path) -> None:
    index, _ = build_index(_issues(), HashingEmbedder())
    assert index.calibration.words is not None
    assert set(index.calibration.words.heads) >= {"symptom", "root_cause", "fix_pattern"}
    index.save(tmp_path / "index")
    loaded = IssueIndex.load(tmp_path / "index")
    assert loaded.calibration.words == index.calibration.words


def test_an_index_too_small_to_calibrate_has_no_words_model() -> None:
    index, _ = build_index(_issues(20), HashingEmbedder())
    assert index.calibration.words is None


def test_a_mix_is_the_same_in_every_process_whatever_its_hash_seed() -> None:
    """A set of strings iterates in an order that changes with the hash seed, and float sums in
    another order differ in their last bits: enough to flip a statement or a link that sits on its
    threshold from one run of the same code to the next."""
    import os
    import subprocess
    import sys

    code = ("from triagebot.engine.classify import mix\n"
            "a = {f'4.{i}': 1 / (i + 3) for i in range(12)}\n"
            "b = {f'4.{i}': 1 / (i + 7) ** 2 for i in range(6, 18)}\n"
            "print(repr(sorted(mix(a, b, 0.4).items())))")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
            for seed in range(1, 9)}
    assert len(runs) == 1
