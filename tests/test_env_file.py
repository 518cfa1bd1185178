"""Settings from a ``.env`` file: the formats docker compose and python-dotenv read, the
environment winning over the file, and a bad line or a missing named file failing with one line
that says where."""
from __future__ import annotations

from pathlib import Path

import pytest

from triagebot.settings import ConfigError, Settings, env_file_line, read_env_file

PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"


def test_env_file_reads_comments_quotes_exports_and_multiline_keys(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        "# a comment\n\n"
        "TRIAGEBOT_APP_ID=42   # trailing comment\n"
        "export TRIAGEBOT_APP_SLUG=my-bot\n"
        "TRIAGEBOT_WEBHOOK_SECRET='literal \\n #not-a-comment'\n"
        f'TRIAGEBOT_PRIVATE_KEY="{PEM.strip()}"\n'
        "TRIAGEBOT_ADMIN_TOKEN=\"tab\\there \\\"quoted\\\"\"\n"
        "TRIAGEBOT_DB=\n", encoding="utf-8")
    values = read_env_file(env)
    assert values["TRIAGEBOT_APP_ID"] == "42"
    assert values["TRIAGEBOT_APP_SLUG"] == "my-bot"
    assert values["TRIAGEBOT_WEBHOOK_SECRET"] == "literal \\n #not-a-comment"
    assert values["TRIAGEBOT_PRIVATE_KEY"] == PEM.strip()  # real newlines inside the quotes
    assert values["TRIAGEBOT_ADMIN_TOKEN"] == 'tab\there "quoted"'
    assert values["TRIAGEBOT_DB"] == ""


def test_a_written_line_reads_back_as_the_same_value(tmp_path: Path) -> None:
    value = PEM + 'with "quotes", a \\ backslash and $dollar'
    (tmp_path / ".env").write_text(env_file_line("TRIAGEBOT_PRIVATE_KEY", value) + "\n")
    assert "\n" not in env_file_line("TRIAGEBOT_PRIVATE_KEY", value)
    assert read_env_file(tmp_path / ".env") == {"TRIAGEBOT_PRIVATE_KEY": value}


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("TRIAGEBOT_APP_ID=1\nTRIAGEBOT_DB=from-file.sqlite3\nTRIAGEBOT_WORKERS=3\n")
    settings = Settings.from_env({"TRIAGEBOT_APP_ID": "2", "TRIAGEBOT_WORKERS": ""}, env_file=env)
    assert settings.app_id == "2"  # the environment
    assert settings.db == "from-file.sqlite3" and settings.workers == 3  # the file (empty = unset)
    assert Settings.from_env({}, env_file=tmp_path / "absent.env").app_id == ""  # default file: optional


def test_a_named_env_file_that_is_missing_or_malformed_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--env-file: cannot read .*absent.env"):
        Settings.from_env({}, env_file=tmp_path / "absent.env", required=True)
    bad = tmp_path / "bad.env"
    bad.write_text("TRIAGEBOT_APP_ID=1\nthis is not a setting\n")
    with pytest.raises(ConfigError, match=r"bad.env:2: expected KEY=VALUE"):
        Settings.from_env({}, env_file=bad)
    bad.write_text('TRIAGEBOT_PRIVATE_KEY="-----BEGIN\nno end\n')
    with pytest.raises(ConfigError, match=r"bad.env:1: TRIAGEBOT_PRIVATE_KEY: the \" quote is never closed"):
        read_env_file(bad)
    bad.write_text('TRIAGEBOT_APP_ID="1" 2\n')
    with pytest.raises(ConfigError, match="text after the closing quote"):
        read_env_file(bad)


def test_a_bad_value_in_the_file_names_its_variable(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("TRIAGEBOT_WORKERS=many\n")
    with pytest.raises(ConfigError, match="TRIAGEBOT_WORKERS"):
        Settings.from_env({}, env_file=env)
