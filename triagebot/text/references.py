"""The issues a report itself names ("similar to #2113", "I went through #889 and #2268, but
they didn't help", a link to another issue). Pure.

The reporter has read those already: linking one back under "Possibly the same problem" tells
them nothing, and takes the place of an issue they have not seen (six links of the 5-fold
backtest were such echoes: DeepSpeed#3094 was offered #2268, which it said did not help).

A reference is read as (repository name, number), the repository's owner left out: repositories
move (``microsoft/DeepSpeed`` is now ``deepspeedai/DeepSpeed``) and old reports link the old
owner. A bare ``#123`` is the report's own repository, as GitHub reads it.
"""
from __future__ import annotations

import re

# ``github.com/<owner>/<name>/issues/<n>`` (or ``/pull/``); names bounded as GitHub bounds them
_URL = re.compile(r"github\.com/[\w.-]{1,39}/([\w.-]{1,100})/(?:issues|pull)/(\d{1,7})", re.I)
# ``#123`` or ``owner/name#123``; not ``&#64;`` (an HTML entity), ``abc#1`` or a URL's fragment
# Not a frame of a stack trace ("frame #12: c10::Error", gdb's "#3  0x00007f in raise"), a GPU's
# or a rank's number ("GPU #1"); pasted logs inside fences are left out before (``cited``).
_SHORT = re.compile(r"(?:/([\w.-]{1,100})|(?<![\w&])(?<!frame )(?<!GPU )(?<!rank ))"
                    r"#(\d{1,7})\b(?! {2}| ?0x)", re.I)


def cited(text: str, repo: str) -> frozenset[tuple[str, int]]:
    """The (lower-cased repository name, number) of every issue the prose of ``text`` names
    (fenced blocks left out); ``repo`` is the report's own ``owner/name``, which a bare ``#123``
    refers to."""
    own = repo.rsplit("/", 1)[-1].lower()
    text = "".join(text.split("```")[::2])  # prose only: a fenced log numbers its lines and frames
    found = {(m.group(1).lower(), int(m.group(2))) for m in _URL.finditer(text)}
    found |= {((m.group(1) or own).lower(), int(m.group(2))) for m in _SHORT.finditer(text)}
    return frozenset(found)


def names(cited_issues: frozenset[tuple[str, int]], repo: str, number: int) -> bool:
    """Whether ``repo``'s issue ``number`` is among ``cited_issues`` (owner aside)."""
    return (repo.rsplit("/", 1)[-1].lower(), number) in cited_issues
