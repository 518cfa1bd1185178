"""The safety net for everything the bot writes in public. Pure.

Every string that did not come from our own templates (titles and resolutions of indexed issues,
evidence snippets cut from the reporter's text, environment values) passes through here before it
reaches a comment. The rules follow RELIABILITY.md 32-36 and 41: no links except ones we build to
allow-listed targets, no images or HTML, no @-mentions, no ``#123`` cross references, no invisible
characters, no secrets.

Mentions and cross references are neutralised by swapping the ASCII sign for its full-width twin
(``＠`` U+FF20, ``＃`` U+FF03). GitHub's mention and reference parsers only recognise the ASCII
signs, so nobody is notified and no back-reference lands on another issue, yet the text stays
readable and contains no invisible characters (a zero-width joiner would be another Trojan Source
vector, and a reader copying the text would carry it along). The swap happens after NFKC, which
would otherwise fold the full-width sign back to ASCII.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from triagebot.text import secrets
from triagebot.text.signal import one_line

_URL = re.compile(
    r"(?:\b[a-z][a-z0-9+.\-]{1,20}://|\bwww\.|\b(?:javascript|data|vbscript|file):(?=\S))\S*", re.I
)
_MENTION = re.compile(r"@(?=[\w\-])")
_REFERENCE = re.compile(r"#(?=\d)")
_GH_REFERENCE = re.compile(r"\b(GH)-(?=\d)", re.I)
_LINK_PLACEHOLDER = "[link removed]"

# One-character Markdown/HTML escapes. ``&`` matters: ``&#64;user`` renders as a live mention;
# ``$`` would open GitHub math, so a title like "loss $x^{2}$" renders as a formula.
_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    **{c: "\\" + c for c in "\\[]()*_`|!~$"},
}
ELLIPSIS = "…"

_DOC_HOSTS: dict[str, tuple[str, ...]] = {
    "deepspeed.ai": ("/",),
    "www.deepspeed.ai": ("/",),
    "colossalai.org": ("/",),
    "docs.nvidia.com": ("/megatron-core/",),
    "pytorch.org": ("/docs/",),
}
REDIRECT_HOST = "redirect.github.com"  # GitHub's own link host that creates no backlinks
_THREAD_KINDS = ("issues", "pull", "pulls", "discussions")
_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._~/\-]*$")
_SAFE_FRAGMENT = re.compile(r"^[A-Za-z0-9._\-]*$")
_REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9\-]{0,38})/[A-Za-z0-9._\-]{1,100}$")


def neutralize_mentions(text: str) -> str:
    """``@login`` -> ``＠login`` (full-width): GitHub does not notify, the reader still sees it."""
    return _MENTION.sub("\uff20", text)


def neutralize_references(text: str) -> str:
    """``#123`` and ``GH-123`` no longer link, so no back-reference is written on those issues."""
    text = _REFERENCE.sub("\uff03", text)
    return _GH_REFERENCE.sub("\\1\u2011", text)


def remove_urls(text: str) -> str:
    """Every URL-like token (any scheme, ``www.``, ``javascript:``/``data:``) becomes a placeholder."""
    return _URL.sub(_LINK_PLACEHOLDER, text)


def neutral(text: str) -> str:
    """The shared first half of every sanitiser: one plain line, link-free, mention-free and
    reference-free, every secret shape masked (so one pasted key does not cost the whole comment)."""
    text = secrets.redact(remove_urls(one_line(text)))
    return neutralize_references(neutralize_mentions(text))


def _cap_escaped(pieces: Iterable[str], max_len: int) -> str:
    """Join escaped pieces without ever cutting an escape or entity in half."""
    out: list[str] = []
    used = 0
    items = list(pieces)
    for i, piece in enumerate(items):
        reserve = len(ELLIPSIS) if i < len(items) - 1 else 0
        if used + len(piece) + reserve > max_len:
            out.append(ELLIPSIS)
            break
        out.append(piece)
        used += len(piece)
    return "".join(out)


def safe_inline(text: str, max_len: int = 200) -> str:
    """User-derived text made safe for one line of Markdown: at most ``max_len`` characters."""
    line = neutral(text)
    return _cap_escaped((_ESCAPES.get(c, c) for c in line), max(max_len, 1))


def safe_code(text: str, max_len: int = 120) -> str:
    """User-derived text as one inline code span (evidence, versions).

    Backticks are dropped because a code span cannot escape them; inside code GitHub renders no
    Markdown, HTML, mentions or references, but we neutralise them anyway in case the span breaks."""
    line = neutral(text).replace("`", "'")
    if len(line) > max_len:
        line = line[: max(max_len - 1, 0)].rstrip() + ELLIPSIS
    return f"`{line}`" if line.strip() else "`…`"


def plain(text: str, max_len: int = 200) -> str:
    """User-derived text for a terminal: no control characters (ANSI escapes), no bidi tricks, no
    token-shaped secrets (CLI output gets pasted into issues too)."""
    text = secrets.redact(one_line(text))
    return text if len(text) <= max_len else text[: max(max_len - 1, 0)] + ELLIPSIS


# Evidence quotes are the one place a reporter's words are shown (as inline code, RELIABILITY 34).
# A quote carrying links, mentions, shell substitutions, words of instructions aimed at a bot, or an
# encoded blob is an injection echoed back rather than an error message, so it is never shown
# (RELIABILITY 38); this holds for the offline rules' quotes and for the model's alike.
_UNSAFE_QUOTE = re.compile(
    r"@|\$\(|://|www\.|#\d|\b[\w-]+\.(com|net|org|io|sh|ai|dev|example)\b", re.I
)
_MARKUP = re.compile(r"[<>`‹›\[\]]")  # harmless inside a code span; ``strict`` refuses it anyway
_INSTRUCTION_WORDS = re.compile(
    r"ignore|instruction|prompt|system:|assistant|\blabel|mention|reveal|api[ _-]?key|secret|"
    r"password|credential|curl|wget|base64|decode",
    re.I,
)
_BLOB = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}")


def inert_quote(line: str, strict: bool = False) -> bool:
    """True when a quoted line of user text is safe to show as evidence (``strict``: not even
    brackets, backticks or angle brackets, for lines a model claims to quote)."""
    line = one_line(line)
    if _UNSAFE_QUOTE.search(line) or _INSTRUCTION_WORDS.search(line):
        return False
    if strict and _MARKUP.search(line):
        return False
    return not any(_encoded(blob) for blob in _BLOB.findall(line))


def _encoded(blob: str) -> bool:
    """Base64-looking: long, mixed case and digits (payloads smuggled past the word filter)."""
    return any(c.isupper() for c in blob) and any(c.islower() for c in blob) and any(
        c.isdigit() for c in blob)


def scan_secrets(text: str, extra_secrets: Iterable[str] = ()) -> list[secrets.Finding]:
    """Secret-looking strings in ``text`` (RELIABILITY 36), also behind Markdown escapes.

    Escaping turns ``ghp_x`` into ``ghp\\_x``, so the text is scanned as written and with the
    backslashes removed. Configured secrets shorter than ``secrets.MIN_CONFIGURED_CHARS`` are
    ignored."""
    return [found for variant in _variants(text) for found in secrets.find(variant, extra_secrets)]


def _variants(text: str) -> list[str]:
    unescaped = text.replace("\\", "")
    return [text] if unescaped == text else [text, unescaped]


def valid_repo(repo: str) -> bool:
    """``owner/name`` as GitHub allows it; guards every URL we build from stored data."""
    return bool(_REPO.match(repo or "")) and ".." not in repo


def allowed_link(url: str, allowed_repos: Iterable[str], own_repo: str | None = None) -> bool:
    """True only for https links to an allowed repo on github.com (or its redirect host) or to a
    framework's docs.

    No query strings (a classic exfiltration channel), no userinfo or ports, and only plain path
    characters so the URL cannot break out of the Markdown link around it. Given ``own_repo`` (the
    repository the comment is posted in), a github.com link to an issue, pull request or
    discussion must point into that repository: anywhere else it would write a "mentioned this
    issue" entry on the other thread (see ``reference_url``)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme != "https" or port is not None or "@" in parts.netloc or parts.query:
        return False
    if not _SAFE_PATH.match(parts.path or "/") or "/../" in parts.path + "/":
        return False
    if not _SAFE_FRAGMENT.match(parts.fragment):
        return False
    host = parts.netloc.lower()
    if host == "github.com" and own_repo is not None and _is_thread(parts.path):
        return _same_repo(parts.path, own_repo) and _allowed_github_path(parts.path, allowed_repos)
    if host in ("github.com", REDIRECT_HOST):
        return _allowed_github_path(parts.path, allowed_repos)
    return any(parts.path.startswith(p) for p in _DOC_HOSTS.get(host, ()))


def _allowed_github_path(path: str, allowed_repos: Iterable[str]) -> bool:
    segments = path.strip("/").split("/")
    if len(segments) < 2:
        return False
    repo = "/".join(segments[:2]).lower()
    return any(repo == allowed.lower() for allowed in allowed_repos if valid_repo(allowed))


def _is_thread(path: str) -> bool:
    """An issue, pull request or discussion: the pages a github.com link cross-references."""
    segments = path.strip("/").split("/")
    return len(segments) >= 3 and segments[2] in _THREAD_KINDS


def _same_repo(path: str, own_repo: str) -> bool:
    return "/".join(path.strip("/").split("/")[:2]).lower() == own_repo.lower()


def issue_url(repo: str, number: int) -> str | None:
    """The canonical issue URL, built by us (stored URL strings are never echoed)."""
    if not valid_repo(repo) or not isinstance(number, int) or number <= 0:
        return None
    return f"https://github.com/{repo}/issues/{number}"


def reference_url(repo: str, number: int, own_repo: str) -> str | None:
    """The URL a comment in ``own_repo`` links an issue by: canonical within the same repository
    (maintainers want those backlinks), through GitHub's redirect host for any other repository.
    GitHub writes no cross-reference for ``redirect.github.com`` links; Dependabot and Renovate
    use that host for exactly this, so a neighbour in pytorch/pytorch gets no timeline entry."""
    url = issue_url(repo, number)
    if url is None or repo.lower() == (own_repo or "").lower():
        return url
    return url.replace("https://github.com/", f"https://{REDIRECT_HOST}/", 1)
