"""Settings, read once from the environment by ``Settings.from_env`` (never at import), validated by
pydantic so a bad value fails at startup with one clear line instead of deep inside a job."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError

DEFAULT_INDEX = Path(__file__).resolve().parent.parent / "index"


def default_index() -> Path:
    """The index the CLI uses when none is named: TRIAGEBOT_INDEX, else the shipped seed index."""
    return Path(os.environ.get("TRIAGEBOT_INDEX") or DEFAULT_INDEX)
MiB = 1024 * 1024


class ConfigError(Exception):
    """A setting is missing or malformed; the message names the variable."""


class Settings(BaseModel):
    """Everything the service needs. Secrets are ``SecretStr`` so they never reach a log line."""

    webhook_secret: SecretStr = SecretStr("")
    webhook_secret_old: SecretStr = SecretStr("")
    app_id: str = ""
    app_slug: str = "triagebot"
    private_key: SecretStr = SecretStr("")
    github_api_url: str = "https://api.github.com"
    db: str = "triagebot.sqlite3"
    index: Path = DEFAULT_INDEX
    queue_url: str = ""
    max_body_bytes: int = Field(default=2 * MiB, gt=0)
    workers: int = Field(default=2, ge=0)
    max_attempts: int = Field(default=5, ge=1)
    openai_api_key: SecretStr = SecretStr("")  # kept only so comments are scanned for it; the
    # LLM's own settings (TRIAGEBOT_LLM_*) are read and validated by llm.LLMSettings alone
    admin_token: SecretStr = SecretStr("")
    github_token: SecretStr = SecretStr("")
    reconcile_interval: float = Field(default=3600.0, ge=0)  # seconds; 0 = no periodic upkeep
    # May private repositories' text go to the LLM endpoint? off | opt-in (their triagebot.yml
    # says ``llm: on``) | on (unless it says ``llm: off``). See domain.visibility.llm_allowed.
    llm_private_repos: Literal["off", "opt-in", "on"] = "off"

    @property
    def bot_login(self) -> str:
        """The login GitHub shows for the App's own comments and labels (loop guard)."""
        return f"{self.app_slug}[bot]"

    def webhook_secrets(self) -> list[str]:
        """Current secret first, then the one being rotated out (verify-with-fallback)."""
        return [s.get_secret_value() for s in (self.webhook_secret, self.webhook_secret_old)
                if s.get_secret_value()]

    def require_serving(self) -> Settings:
        """Refuse to serve without a webhook secret: an unsigned endpoint accepts anyone's events."""
        if not self.webhook_secret.get_secret_value():
            raise ConfigError("TRIAGEBOT_WEBHOOK_SECRET is empty; set it to the App's webhook secret")
        return self

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        values = {field: env[var] for var, field in ENV_VARS.items() if env.get(var, "") != ""}
        if "private_key" not in values and env.get("TRIAGEBOT_PRIVATE_KEY_PATH"):
            values["private_key"] = _read_key(env["TRIAGEBOT_PRIVATE_KEY_PATH"])
        try:
            return cls(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            var = FIELD_VARS.get(str(first["loc"][0]), str(first["loc"][0]))
            raise ConfigError(f"{var}: {first['msg']}") from None


def _read_key(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"TRIAGEBOT_PRIVATE_KEY_PATH: cannot read {path}: {exc.strerror}") from None


ENV_VARS = {
    "TRIAGEBOT_WEBHOOK_SECRET": "webhook_secret",
    "TRIAGEBOT_WEBHOOK_SECRET_OLD": "webhook_secret_old",
    "TRIAGEBOT_APP_ID": "app_id",
    "TRIAGEBOT_APP_SLUG": "app_slug",
    "TRIAGEBOT_PRIVATE_KEY": "private_key",
    "TRIAGEBOT_GITHUB_API_URL": "github_api_url",
    "TRIAGEBOT_GITHUB_TOKEN": "github_token",
    "TRIAGEBOT_RECONCILE_INTERVAL": "reconcile_interval",
    "TRIAGEBOT_DB": "db",
    "TRIAGEBOT_INDEX": "index",
    "TRIAGEBOT_QUEUE_URL": "queue_url",
    "TRIAGEBOT_MAX_BODY_BYTES": "max_body_bytes",
    "TRIAGEBOT_WORKERS": "workers",
    "TRIAGEBOT_MAX_ATTEMPTS": "max_attempts",
    "OPENAI_API_KEY": "openai_api_key",
    "TRIAGEBOT_ADMIN_TOKEN": "admin_token",
    "TRIAGEBOT_LLM_PRIVATE_REPOS": "llm_private_repos",
}
FIELD_VARS = {field: var for var, field in ENV_VARS.items()}
