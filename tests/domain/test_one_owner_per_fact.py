"""One owner per fact: the dimension list lives in domain/taxonomy.py, invisible characters in
text/signal.py, secret shapes in text/secrets.py, the GitHub issue -> engine issue conversion in
github/port.py; ``apply_correction``, ``clean`` and ``redact`` each mean one thing."""
from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from triagebot.domain import taxonomy
from triagebot.domain.models import MAX_BODY_CHARS, MAX_TITLE_CHARS
from triagebot.github.port import IssueState
from triagebot.text import signal

PACKAGE = Path(__file__).resolve().parents[2] / "triagebot"


def sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}


# A priority, not a restatement of the list: which advice a comment gives first.
ORDERINGS = {("comment/sections.py", ("root_cause", "symptom", "fix_pattern"))}


def test_dimension_lists_are_written_out_only_in_the_taxonomy() -> None:
    """No tuple, list or set of dimension names outside domain/taxonomy.py that restates one of
    its named sets (all of them, the four, the flags, the labels' five, those inside a stage)."""
    named = {frozenset(s) for s in (taxonomy.DIMENSIONS, taxonomy.FLAGS, taxonomy.LABEL_DIMENSIONS,
                                    taxonomy.ALL_DIMENSIONS, taxonomy.IN_STAGE, taxonomy.AFTER_STAGE)}
    found = set()
    for name, code in sources().items():
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                values = tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
                if frozenset(values) in named:
                    found.add((name, values))
    assert {name for name, _ in found - ORDERINGS} == {"domain/taxonomy.py"}
    assert taxonomy.ALL_DIMENSIONS == taxonomy.DIMENSIONS + taxonomy.FLAGS
    assert set(taxonomy.LABEL_DIMENSIONS) | {"is_bug"} == set(taxonomy.ALL_DIMENSIONS)


def test_each_of_apply_correction_clean_and_redact_is_defined_once() -> None:
    defined = Counter(node.name for code in sources().values() for node in ast.walk(ast.parse(code))
                      if isinstance(node, ast.FunctionDef))
    assert defined["apply_correction"] == defined["clean"] == defined["redact"] == 1


def test_invisible_characters_have_one_set() -> None:
    owners = [name for name, code in sources().items() if "\\u200b" in code]
    assert owners == ["text/signal.py"]
    for char in "\u200b\u200d\u202e\u2060\u2066\ufeff\u00ad":
        assert signal.INVISIBLE.search(char) and char not in signal.one_line(f"a{char}b")


def test_issue_state_becomes_an_engine_issue_in_one_place() -> None:
    state = IssueState(repo="o/r", number=5, url="https://github.com/o/r/issues/5",
                       title="t" * (MAX_TITLE_CHARS + 50), body="b" * (MAX_BODY_CHARS + 1), author="x")
    issue = state.to_issue()
    assert (issue.repo, issue.number, issue.url) == ("o/r", 5, "https://github.com/o/r/issues/5")
    assert len(issue.title) == MAX_TITLE_CHARS and len(issue.body) == MAX_BODY_CHARS
    by_hand = re.compile(r"\bIssue\(repo=(\w+\.)+repo")
    assert [name for name, code in sources().items() if by_hand.search(code)] == ["github/port.py"]
