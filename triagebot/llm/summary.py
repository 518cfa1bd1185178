"""The LLM's one-sentence "how it was fixed" for the index: prompt building and answer checking.
Pure, given the template files; ``llm.LLMClassifier.summarize_resolution`` does the I/O.

The answer is model free text that ends up shown in public next to similar issues, and the model
read a discussion anyone could write into. So the answer is treated as hostile: anything that
looks like a link, a mention, a reference, markup, a secret or words aimed at a bot rejects it
(the caller then keeps the offline extract); what passes is cut to one sentence of at most
``MAX_CHARS`` and neutralised like every other resolution line.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from string import Template

from triagebot.github.port import CommentState
from triagebot.llm import prompt as llm_prompt
from triagebot.llm.prompt import Prompt
from triagebot.text import sanitize
from triagebot.text import secrets as secret_shapes
from triagebot.text import signal as text

VERSION = "resolution_v1"
DISCUSSION_BYTES = 6_144
MAX_CHARS = 200
MIN_CHARS = 12  # "Fixed." says nothing a reader could use
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_UNKNOWN = re.compile(r"^\W*(unknown|none|n/?a)\W*$", re.I)
_WRAPPERS = "\"'“”‘’ "


def build(prompts_dir: str | None, title: str, discussion: str,
          secrets: tuple[str, ...] = ()) -> Prompt:
    """Both turns; the untrusted title and discussion only in the user turn, between tags that
    the text cannot close (angle brackets become look-alikes), secrets redacted, ≤ 6 KB."""
    directory = llm_prompt.prompts_dir({"TRIAGEBOT_PROMPTS_DIR": prompts_dir or ""})
    system, user = (_template(directory, part) for part in ("system", "user"))
    body = f"Title: {' '.join(title.split())[:300]}\n\n{discussion}"
    excerpt = _tail(secret_shapes.redact(llm_prompt.untrusted(body), secrets), DISCUSSION_BYTES)
    return Prompt(VERSION, system.template, user.substitute(discussion=excerpt), excerpt)


def _template(directory: Path, part: str) -> Template:
    return Template((directory / f"{VERSION}.{part}.md").read_text(encoding="utf-8"))


def _tail(value: str, nbytes: int) -> str:
    """The end of the discussion when it is too long: that is where the resolution is."""
    data = value.encode("utf-8")
    if len(data) <= nbytes:
        return value
    return "[… earlier comments cut …]\n" + data[-nbytes:].decode("utf-8", errors="ignore")


def discussion(comments: Iterable[CommentState]) -> str:
    """Human comments, oldest first, each with its author's role; markup and links removed."""
    lines = []
    for comment in comments:
        if comment.author_type == "Bot":
            continue
        role = (comment.author_association or "NONE").lower()
        lines.append(f"[{role}] {text.clean(comment.body or '')}")
    return "\n\n".join(lines)


def sanitised(answer: str | None, secrets: tuple[str, ...] = ()) -> str | None:
    """The answer as a safe resolution line, or None when it is empty, UNKNOWN or suspicious."""
    line = text.one_line(answer or "").strip(_WRAPPERS)
    if not line or _UNKNOWN.match(line) or len(line) < MIN_CHARS:
        return None
    if not sanitize.inert_quote(line, strict=True) or sanitize.scan_secrets(line, secrets):
        return None
    if "://" in line or "\\" in line or line.startswith(("-", "*", "#", ">")):
        return None
    sentence = _SENTENCE_END.split(line)[0]
    sentence = sanitize.neutralize_references(sanitize.neutralize_mentions(sentence))
    if len(sentence) > MAX_CHARS:
        sentence = sentence[: MAX_CHARS - 1].rstrip() + sanitize.ELLIPSIS
    return sentence
