"""sanitize: the building blocks of the public comment's safety."""
from __future__ import annotations

import pytest

from triagebot.text import sanitize

REPOS = ["microsoft/DeepSpeed", "hpcaitech/ColossalAI"]


def test_neutralize_mentions_keeps_text_readable():
    assert sanitize.neutralize_mentions("ping @octocat and @org/team") == "ping ＠octocat and ＠org/team"
    assert sanitize.neutralize_mentions("a @ b") == "a @ b"  # a lone sign is not a mention


def test_fullwidth_input_is_folded_then_neutralised():
    assert "@" not in sanitize.safe_inline("\uff20octocat")
    assert sanitize.safe_inline("\uff20octocat") == "＠octocat"


@pytest.mark.parametrize("raw,expected", [
    ("a <b> & c", "a &lt;b&gt; &amp; c"),
    ("[x](y)", "\\[x\\]\\(y\\)"),
    ("*bold* _it_ `code` | ! ~", "\\*bold\\* \\_it\\_ \\`code\\` \\| \\! \\~"),
    ("back\\slash", "back\\\\slash"),
    ("fixes #12, GH-3", "fixes ＃12, GH‑3"),
    ("a\u202eb\u200bc\ufeffd\u2066e", "abcde"),
    ("  many \n\t spaces  ", "many spaces"),
    ("see https://evil.example/x?y=1 now", "see \\[link removed\\] now"),
    ("javascript:alert(1)", "\\[link removed\\]"),
    ("www.evil.example", "\\[link removed\\]"),
    ("data:text/html;base64,PHNjcmlwdD4=", "\\[link removed\\]"),
    ("training data: loaded", "training data: loaded"),
    ("&#64;user", "&amp;＃64;user"),
])
def test_safe_inline(raw, expected):
    assert sanitize.safe_inline(raw, 200) == expected


@pytest.mark.parametrize("max_len", [1, 2, 5, 17, 50])
def test_safe_inline_cap_never_splits_an_escape(max_len):
    out = sanitize.safe_inline("<<<<<<<<<<____________&&&&&&&&&&&" * 3, max_len)
    assert len(out) <= max_len
    assert out.endswith("…")
    body = out[:-1]
    assert body.replace("&lt;", "").replace("\\_", "").replace("&amp;", "") == ""


def test_safe_code():
    assert sanitize.safe_code("x = `rm -rf` @me") == "`x = 'rm -rf' ＠me`"
    assert sanitize.safe_code("") == "`…`"
    assert len(sanitize.safe_code("y" * 500, 50)) == 52


def test_plain_for_terminals():
    assert sanitize.plain("red \x1b[31m text\x07\u202e", 100) == "red [31m text"
    assert sanitize.plain("abcdef", 4) == "abc…"


@pytest.mark.parametrize("text,kind", [
    ("token ghs_16C7e42F292c6912E7710c838347Ae178B4a", "github_app_token"),
    ("ghs_123_eyJhbGciOi.JIUzI1NiJ9-abc", "github_app_token"),
    ("ghp_" + "a" * 36, "github_pat"),
    ("github_pat_11AAAA_bbbb", "github_pat"),
    ("gho_abcdef", "github_oauth_token"),
    ("key=sk-proj-abcdefgh12345", "openai_key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "private_key"),
    ("escaped ghp\\_abcdef", "github_pat"),
])
def test_scan_secrets_finds(text, kind):
    assert kind in {f.kind for f in sanitize.scan_secrets(text)}


@pytest.mark.parametrize("text", ["disk-offload", "risk-free sk-", "task-sk-1", "ghost_writer", ""])
def test_scan_secrets_ignores_ordinary_words(text):
    assert sanitize.scan_secrets(text) == []


def test_scan_secrets_configured_values():
    findings = sanitize.scan_secrets("the secret is s3cr3t-value!", ["s3cr3t-value", "", "short"])
    assert [f.kind for f in findings] == ["configured_secret"]
    assert "s3cr3t" not in repr(findings)  # findings never carry the value
    assert sanitize.scan_secrets("a short word", ["short"]) == []


@pytest.mark.parametrize("url", [
    "https://github.com/microsoft/DeepSpeed/issues/123",
    "https://github.com/microsoft/deepspeed/issues/1",
    "https://github.com/hpcaitech/ColossalAI/pull/7",
    "https://github.com/microsoft/DeepSpeed/blob/master/docs/README.md",
    "https://www.deepspeed.ai/docs/config-json/#zero-optimizations",
    "https://deepspeed.ai/tutorials/zero/",
    "https://colossalai.org/docs/get_started/installation",
    "https://docs.nvidia.com/megatron-core/developer-guide/latest/index.html",
    "https://pytorch.org/docs/stable/distributed.html",
])
def test_allowed_link_accepts(url):
    assert sanitize.allowed_link(url, REPOS)


@pytest.mark.parametrize("url", [
    "http://github.com/microsoft/DeepSpeed/issues/1",
    "https://github.com/evil/repo/issues/1",
    "https://github.com/microsoft",
    "https://github.com/microsoft/DeepSpeed/issues/1?x=secret",
    "https://user@github.com/microsoft/DeepSpeed/issues/1",
    "https://github.com:8443/microsoft/DeepSpeed/issues/1",
    "https://github.com.evil.example/microsoft/DeepSpeed/issues/1",
    "https://evil.example/https://github.com/microsoft/DeepSpeed",
    "https://github.com/microsoft/DeepSpeed/issues/1)![x](https://evil.example",
    "https://github.com/microsoft/DeepSpeed/../../evil/x",
    "https://docs.nvidia.com/cuda/",
    "https://pytorch.org/blog/",
    "javascript:alert(1)",
    "data:text/html,<b>",
    "https://[::1/",
    "",
])
def test_allowed_link_rejects(url):
    assert not sanitize.allowed_link(url, REPOS)


def test_issue_url_built_from_parts():
    assert sanitize.issue_url("a/b", 3) == "https://github.com/a/b/issues/3"
    assert sanitize.issue_url("a/b)](x", 3) is None
    assert sanitize.issue_url("a/b", 0) is None
    assert sanitize.issue_url("../b", 3) is None
