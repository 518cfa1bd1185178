"""Signature verification vectors (GitHub docs, octokit/webhooks-methods) and settings loading."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from triagebot.service import signature as webhook
from triagebot.settings import ConfigError, Settings

GITHUB_SIG = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
OCTO_BODY = '{\n  "foo": "bar"\n}\n'
OCTO_SIG = "sha256=e3eccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f"


def normalized(payload: dict) -> str:
    """octokit's toNormalizedJsonString: JSON.stringify(p, null, 2) + newline, upper-case \\uXXXX."""
    text = json.dumps(payload, indent=2, ensure_ascii=False)
    text = re.sub(r"([^\\])\\u([0-9a-f]{4})", lambda m: m.group(1) + "\\u" + m.group(2).upper(), text)
    return text + "\n"


def test_github_documented_vector() -> None:
    assert webhook.sign("It's a Secret to Everybody", "Hello, World!") == GITHUB_SIG
    assert webhook.verify("It's a Secret to Everybody", b"Hello, World!", GITHUB_SIG)


def test_octokit_basic_vector_str_and_bytes() -> None:
    assert webhook.verify("mysecret", OCTO_BODY, OCTO_SIG)
    assert webhook.verify(b"mysecret", OCTO_BODY.encode(), OCTO_SIG)


def test_octokit_special_characters_vectors() -> None:
    payload = {"foo": "Foo\n\u001b[34mbar: ♥♥♥♥♥♥♥♥\nthis-is-lost\u001b[0m\u001b[2K"}
    sig = "sha256=9dacf9003316b09be07df56d86a2d0d6872e42a1e6c72c3bad9ff915a7c5603e"
    assert webhook.verify("development", normalized(payload), sig)
    sig2 = "sha256=87316067e2011fae39998b18c46a14d83b3e7c3ffdd88fb2ee5afb7d11288e60"
    assert webhook.verify("development", normalized({"foo": "\\u001b"}), sig2)


@pytest.mark.parametrize("header", [
    "sha256=xxxccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f", "foo", "", None,
    "sha1=" + "0" * 40, OCTO_SIG.upper(), OCTO_SIG[:-1], OCTO_SIG + "0"])
def test_bad_signatures_are_rejected(header: str | None) -> None:
    assert not webhook.verify("mysecret", OCTO_BODY, header)


def test_wrong_secret_changed_byte_and_reserialised_body_fail() -> None:
    assert not webhook.verify("wrongsecret", OCTO_BODY, OCTO_SIG)
    assert not webhook.verify("mysecret", OCTO_BODY.replace("bar", "baz"), OCTO_SIG)
    assert not webhook.verify("mysecret", json.dumps(json.loads(OCTO_BODY)), OCTO_SIG)


@pytest.mark.parametrize("secret", ["", b"", None])
def test_missing_secret_raises(secret) -> None:
    with pytest.raises(ValueError):
        webhook.verify(secret, OCTO_BODY, OCTO_SIG)
    with pytest.raises(ValueError):
        webhook.verify_any([secret], OCTO_BODY, OCTO_SIG)


def test_missing_body_raises() -> None:
    with pytest.raises(ValueError):
        webhook.verify("mysecret", None, OCTO_SIG)  # type: ignore[arg-type]


def test_verify_with_fallback_for_rotation() -> None:
    assert webhook.verify_any(["newsecret", "mysecret"], OCTO_BODY, OCTO_SIG)
    assert webhook.verify_any(["mysecret", ""], OCTO_BODY, OCTO_SIG)
    assert not webhook.verify_any(["newsecret", "older"], OCTO_BODY, OCTO_SIG)


def test_no_signature_compared_with_equality_operator() -> None:
    """RELIABILITY 3: constant-time comparison only; grep the receiving code for == on digests."""
    root = Path(__file__).resolve().parents[2] / "triagebot" / "service"
    suspicious = re.compile(r"(signature|digest|expected|header|hexdigest\(\)).*[!=]="
                            r"|[!=]=.*(signature|digest|hexdigest)", re.I)
    for name in ("signature.py", "app.py"):
        for line in (root / name).read_text().splitlines():
            code = line.split("#")[0]
            assert not suspicious.search(code), f"{name}: {line.strip()}"
    assert "compare_digest" in (root / "signature.py").read_text()


# settings ---------------------------------------------------------------------------------------
def test_settings_from_env_reads_every_variable_once(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_text("-----BEGIN RSA PRIVATE KEY-----\nabc\n")
    env = {"TRIAGEBOT_WEBHOOK_SECRET": "s1", "TRIAGEBOT_WEBHOOK_SECRET_OLD": "s0",
           "TRIAGEBOT_APP_SLUG": "ddp-triage", "TRIAGEBOT_PRIVATE_KEY_PATH": str(key),
           "TRIAGEBOT_MAX_BODY_BYTES": "1024", "TRIAGEBOT_WORKERS": "3", "OPENAI_API_KEY": "sk-x"}
    s = Settings.from_env(env)
    assert s.bot_login == "ddp-triage[bot]"
    assert s.webhook_secrets() == ["s1", "s0"]
    assert s.max_body_bytes == 1024 and s.workers == 3
    assert s.private_key.get_secret_value().startswith("-----BEGIN")
    assert "sk-x" not in repr(s) and "s1" not in str(s.model_dump())
    assert Settings.from_env({}).max_body_bytes == 2 * 1024 * 1024


def test_empty_secret_refuses_to_serve() -> None:
    with pytest.raises(ConfigError, match="TRIAGEBOT_WEBHOOK_SECRET"):
        Settings.from_env({"TRIAGEBOT_WEBHOOK_SECRET": ""}).require_serving()


def test_bad_number_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="TRIAGEBOT_MAX_BODY_BYTES"):
        Settings.from_env({"TRIAGEBOT_MAX_BODY_BYTES": "lots"})


def test_env_example_documents_every_variable() -> None:
    from triagebot.settings import ENV_VARS

    text = (Path(__file__).resolve().parents[2] / ".env.example").read_text()
    for var in list(ENV_VARS) + ["TRIAGEBOT_PRIVATE_KEY_PATH"]:
        assert re.search(rf"^#?\s*{var}=", text, re.M), var
