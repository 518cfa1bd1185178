"""Descriptions and fix advice: complete, short, plain, and in our own words (not the paper's)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from triagebot.domain import missing, taxonomy

PAPER = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "000_fcc86202e0fdeea7.txt"
NGRAM = 12


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _ngrams(words: list[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    return {tuple(words[i: i + n]) for i in range(len(words) - n + 1)}


def _our_texts() -> dict[str, str]:
    texts = {f"description {k}": v for k, v in taxonomy.DESCRIPTIONS.items()}
    texts.update({f"advice {k}": " ".join(v) for k, v in taxonomy.FIX_ADVICE.items()})
    texts.update({f"missing {k}": v for k, v in missing.DESCRIPTIONS.items()})
    return texts


@pytest.mark.parametrize("dimension", taxonomy.DIMENSIONS)
def test_every_id_has_a_description(dimension: str) -> None:
    for label_id in taxonomy.ids(dimension):
        text = taxonomy.describe(dimension, label_id)
        assert 20 <= len(text) <= 320, (label_id, text)


def test_counts_match_the_taxonomy() -> None:
    assert [len(taxonomy.ids(d)) for d in taxonomy.DIMENSIONS] == [5, 34, 28, 6]
    assert set(taxonomy.DESCRIPTIONS) == {i for d in taxonomy.DIMENSIONS for i in taxonomy.ids(d)}


def test_unknown_has_no_description_or_advice() -> None:
    assert taxonomy.describe("symptom", "unknown") == ""
    assert taxonomy.advice("unknown") == []


def test_fix_advice_is_short_and_plain() -> None:
    assert set(taxonomy.FIX_ADVICE) == set(taxonomy.ids("fix_pattern"))
    for fix, bullets in taxonomy.FIX_ADVICE.items():
        assert 2 <= len(bullets) <= 4, fix
        for bullet in bullets:
            assert bullet and len(bullet) <= 160, bullet
            assert "http" not in bullet and "@" not in bullet and "](" not in bullet


def test_f2_advice_checks_torch_cuda_against_nvcc() -> None:
    assert any("torch.version.cuda" in b and "nvcc" in b for b in taxonomy.advice("F2"))


def test_overlap_detector_finds_a_copied_sentence() -> None:
    sentence = "one two three four five six seven eight nine ten eleven twelve thirteen"
    assert _ngrams(_words("prefix " + sentence)) & _ngrams(_words(sentence + " suffix"))


@pytest.mark.skipif(not PAPER.exists(), reason="paper text not available here")
def test_no_text_repeats_twelve_words_of_the_paper() -> None:
    paper = _ngrams(_words(PAPER.read_text(encoding="utf-8")))
    for where, text in _our_texts().items():
        shared = _ngrams(_words(text)) & paper
        assert not shared, (where, [" ".join(s) for s in shared][:3])
