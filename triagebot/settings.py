"""Settings: one validated object, read from the environment by ``Settings.from_env`` and nowhere
else, once, by each process's entry point (``triagebot`` commands in ``cli.main``, the gunicorn
factory and the RQ job entry in ``service.wiring``), then passed down.

pydantic validates every value, so a bad one fails at startup with one line naming the variable
instead of deep inside a job. The LLM's part is nested (``Settings.llm``, None while no model or
server is configured). Library code called without settings (a test, ``bench/``, the engine deep inside a CLI
command) asks ``current()``: the settings a CLI command put in effect, else a fresh read of the
environment.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator


def _seed_index() -> Path:
    """The shipped seed index: ``triagebot/seed_index`` inside an installed wheel (``setup.py``
    maps the repository's top-level ``index/`` there, subfolders included), else ``index/`` of the
    checkout the package runs from (an editable install, ``PYTHONPATH=.``). The one owner of the
    location; everything else (the encoder in ``<seed index>/encoder`` too) derives from it."""
    package = Path(__file__).resolve().parent
    packaged = package / "seed_index"
    return packaged if (packaged / "manifest.json").is_file() else package.parent / "index"


DEFAULT_INDEX = _seed_index()
DEFAULT_ENV_FILE = Path(".env")  # read from the working directory when present
MiB = 1024 * 1024
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# Variables whose values must never reach a prompt or a comment (any name that says so).
_SECRET_NAMES = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|PRIVATE|CREDENTIAL", re.I)
MIN_SECRET_VALUE_CHARS = 8


class ConfigError(Exception):
    """A setting is missing or malformed; the message names the variable."""


class LLMConfigError(ConfigError, ValueError):
    """A bad TRIAGEBOT_LLM_* value; the message is one line naming the variable."""


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of secret-looking variables, redacted from prompts should any ever show up."""
    return tuple(v for k, v in env.items() if _SECRET_NAMES.search(k) and len(v) >= MIN_SECRET_VALUE_CHARS)


class LLMSettings(BaseModel):
    """The optional LLM's part of the settings (an OpenAI-compatible chat-completions server)."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(default="default", min_length=1)
    base_url: str | None = Field(default=None, pattern=r"^https?://")
    api_key: SecretStr | None = None
    timeout: float = Field(default=20.0, gt=0, le=30)
    max_tokens: int = Field(default=600, ge=64, le=8192)
    calls_per_hour: int = Field(default=200, ge=0)
    cache_path: str | None = None
    prompts_dir: str | None = None
    secret_values: tuple[str, ...] = Field(default=(), repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LLMSettings | None:
        """The LLM part of ``env``; None when neither a model nor a base URL is configured (the
        bot stays offline). Called by ``Settings.from_env`` with the process's environment."""
        if not (env.get(LLM_ENV_VARS["model"]) or env.get(LLM_ENV_VARS["base_url"])):
            return None
        values: dict[str, Any] = {k: env[v] for k, v in LLM_ENV_VARS.items() if env.get(v)}
        values["secret_values"] = secret_values(env)
        try:
            return cls(**values)
        except ValidationError as exc:
            err = exc.errors()[0]
            name = LLM_ENV_VARS.get(str(err["loc"][0]), str(err["loc"][0]))
            raise LLMConfigError(f"{name}: {err['msg']}") from None


class Settings(BaseModel):
    """Everything triagebot reads from its environment. Secrets are ``SecretStr`` so they never
    reach a log line."""

    webhook_secret: SecretStr = SecretStr("")
    webhook_secret_old: SecretStr = SecretStr("")
    app_id: str = ""
    app_slug: str = "triagebot"
    private_key: SecretStr = SecretStr("")
    github_api_url: str = "https://api.github.com"
    db: str = "triagebot.sqlite3"
    data_dir: Path = Path("triagebot-data")  # what the service writes: the live index
    db_pool_size: int = Field(default=10, ge=1)  # PostgreSQL sessions per process
    index: Path | None = None  # the live index; default ``data_dir/index``
    queue_url: str = ""
    max_body_bytes: int = Field(default=2 * MiB, gt=0)
    workers: int = Field(default=2, ge=0)
    max_attempts: int = Field(default=5, ge=1)
    job_lease: float = Field(default=60.0, ge=1)  # seconds; renewed while a job runs
    stop_grace: float = Field(default=8.0, ge=0)  # seconds a stopping worker may finish its job
    openai_api_key: SecretStr = SecretStr("")  # also the LLM's key; here so comments are scanned for it
    admin_token: SecretStr = SecretStr("")
    github_token: SecretStr = SecretStr("")
    reconcile_interval: float = Field(default=3600.0, ge=0)  # seconds; 0 = no periodic upkeep
    embedder: str = ""  # backend of all-MiniLM-L6-v2 (engine.embed.BACKENDS); "" = the default
    cache_dir: Path | None = None  # exported ONNX graphs; None = ~/.cache/triagebot
    log_level: str = "WARNING"  # the CLI's log lines (the service logs JSON lines at INFO)
    llm: LLMSettings | None = None
    # May private repositories' text go to the LLM endpoint? off | opt-in (their triagebot.yml
    # says ``llm: on``) | on (unless it says ``llm: off``). See domain.visibility.llm_allowed.
    # Top level rather than in ``llm`` so a bad value fails at startup even while no model is
    # configured (``llm`` is None then and its variables are not read).
    llm_private_repos: Literal["off", "opt-in", "on"] = "off"
    # Where the service keeps what it learns (issue #14): "database" (TRIAGEBOT_DB, SQLite or
    # PostgreSQL: every worker on every machine sees every change), "directory" (the live index
    # files in the data directory: one machine), or "auto": the database when it is PostgreSQL.
    index_store: Literal["auto", "database", "directory"] = "auto"
    retrain_interval: float = Field(default=60.0, ge=0)  # seconds between trainer rounds; 0 = never

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        if value.upper() not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
        return value.upper()

    @property
    def index_dir(self) -> Path:
        """The index the service reads and writes (closed issues, review-page corrections):
        TRIAGEBOT_INDEX when set, else ``data_dir/index``, which the service seeds from the
        shipped index on first start. Never the package's own ``index/`` by default: a running
        service must not change a checkout or an installed package under itself."""
        return self.index if self.index is not None else self.data_dir / "index"

    @property
    def cli_index(self) -> Path:
        """The index CLI commands read when none is named (``triage``, ``eval``, ``bench``):
        TRIAGEBOT_INDEX when set, else the shipped seed index, read only. ``index sync`` and
        ``retrain`` write the service's live index instead (``index_dir``)."""
        return self.index if self.index is not None else DEFAULT_INDEX

    @property
    def index_in_database(self) -> bool:
        """Does the service keep its index in the database (``index_store``)?"""
        if self.index_store == "auto":
            return self.db.startswith(("postgresql://", "postgres://"))
        return self.index_store == "database"

    @property
    def seed_index(self) -> Path:
        """What the database is seeded from on first start: TRIAGEBOT_INDEX, else the shipped one."""
        return self.index if self.index is not None else DEFAULT_INDEX

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
    def from_env(cls, env: Mapping[str, str] | None = None, env_file: Path | None = None,
                 required: bool = False) -> Settings:
        """The one reader of the environment (``env``: a mapping standing in for it) and of the
        ``.env`` file ``env_file`` (``KEY=VALUE`` lines, see ``read_env_file``): a variable set in
        the environment wins over the file, so ``TRIAGEBOT_DB=… triagebot serve`` overrides
        ``.env`` for one run (an empty variable counts as unset, as everywhere here). A missing
        ``env_file`` is skipped unless ``required`` (the user named it with ``--env-file``)."""
        env = os.environ if env is None else env
        if env_file is not None and (required or env_file.is_file()):
            env = {**read_env_file(env_file), **{k: v for k, v in env.items() if v != ""}}
        values: dict[str, Any] = {field: env[var] for var, field in ENV_VARS.items()
                                  if env.get(var, "") != ""}
        if "private_key" not in values and env.get("TRIAGEBOT_PRIVATE_KEY_PATH"):
            values["private_key"] = _read_key(env["TRIAGEBOT_PRIVATE_KEY_PATH"])
        values["llm"] = LLMSettings.from_env(env)
        try:
            return cls(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            var = FIELD_VARS.get(str(first["loc"][0]), str(first["loc"][0]))
            raise ConfigError(f"{var}: {first['msg']}") from None


_ENV_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of a ``.env`` file as docker compose and python-dotenv read them:
    ``#`` comments and blank lines skipped, an optional ``export``, ``'single'`` quotes literal,
    ``"double"`` quotes with ``\\n``-style escapes and real newlines (a PEM key), unquoted values
    stripped and cut at `` #``. A line that is none of these fails with its line number."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--env-file: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    values: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line, start = lines[i], i + 1
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _ENV_LINE.fullmatch(line)
        if match is None:
            raise ConfigError(f"{path}:{start}: expected KEY=VALUE, got {line.strip()[:40]!r}")
        key, raw = match.groups()
        if raw[:1] in ("'", '"'):
            quote, text = raw[0], raw[1:]
            while not _closed(text, quote):
                if i >= len(lines):
                    raise ConfigError(f"{path}:{start}: {key}: the {quote} quote is never closed")
                text += "\n" + lines[i]
                i += 1
            body, _, rest = _split_quoted(text, quote)
            if rest.strip() and not rest.strip().startswith("#"):
                raise ConfigError(f"{path}:{start}: {key}: text after the closing quote")
            values[key] = body
        else:
            values[key] = re.split(r"\s#", raw, maxsplit=1)[0].strip()
    return values


def _closed(text: str, quote: str) -> bool:
    return _split_quoted(text, quote)[1] == quote


def _split_quoted(text: str, quote: str) -> tuple[str, str, str]:
    """(value, the closing quote or "", what follows it) of a quoted value's text."""
    out: list[str] = []
    j = 0
    while j < len(text):
        ch = text[j]
        if ch == quote:
            return "".join(out), quote, text[j + 1:]
        if ch == "\\" and quote == '"' and j + 1 < len(text):
            out.append(_ESCAPES.get(text[j + 1], "\\" + text[j + 1]))
            j += 2
            continue
        out.append(ch)
        j += 1
    return "".join(out), "", ""


def env_file_line(key: str, value: str) -> str:
    """One ``KEY="VALUE"`` line that ``read_env_file`` (and docker compose) read back as ``value``."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'{key}="{escaped}"'


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
    "TRIAGEBOT_DB_POOL_SIZE": "db_pool_size",
    "TRIAGEBOT_INDEX": "index",
    "TRIAGEBOT_DATA_DIR": "data_dir",
    "TRIAGEBOT_QUEUE_URL": "queue_url",
    "TRIAGEBOT_MAX_BODY_BYTES": "max_body_bytes",
    "TRIAGEBOT_WORKERS": "workers",
    "TRIAGEBOT_MAX_ATTEMPTS": "max_attempts",
    "TRIAGEBOT_JOB_LEASE": "job_lease",
    "TRIAGEBOT_STOP_GRACE": "stop_grace",
    "OPENAI_API_KEY": "openai_api_key",
    "TRIAGEBOT_ADMIN_TOKEN": "admin_token",
    "TRIAGEBOT_EMBEDDER": "embedder",
    "TRIAGEBOT_CACHE": "cache_dir",
    "TRIAGEBOT_LOG_LEVEL": "log_level",
    "TRIAGEBOT_LLM_PRIVATE_REPOS": "llm_private_repos",
    "TRIAGEBOT_INDEX_STORE": "index_store",
    "TRIAGEBOT_RETRAIN_INTERVAL": "retrain_interval",
}
FIELD_VARS = {field: var for var, field in ENV_VARS.items()}
# The nested LLM part (``Settings.llm``): field -> variable. OPENAI_API_KEY is read by both parts.
LLM_ENV_VARS = {
    "model": "TRIAGEBOT_LLM_MODEL",
    "base_url": "TRIAGEBOT_LLM_BASE_URL",
    "api_key": "OPENAI_API_KEY",
    "timeout": "TRIAGEBOT_LLM_TIMEOUT",
    "max_tokens": "TRIAGEBOT_LLM_MAX_TOKENS",
    "calls_per_hour": "TRIAGEBOT_LLM_CALLS_PER_HOUR",
    "cache_path": "TRIAGEBOT_LLM_CACHE",
    "prompts_dir": "TRIAGEBOT_PROMPTS_DIR",
}


_in_effect: Settings | None = None


def current() -> Settings:
    """The settings the process's entry point put in effect; without one (library use, tests,
    ``bench/``) the environment as it is now, through ``Settings.from_env``."""
    return _in_effect if _in_effect is not None else Settings.from_env()


@contextmanager
def in_effect(settings: Settings) -> Iterator[Settings]:
    """Put ``settings`` in effect while a CLI command runs (restored after, so a command run
    in-process by a test leaves nothing behind)."""
    global _in_effect
    previous, _in_effect = _in_effect, settings
    try:
        yield settings
    finally:
        _in_effect = previous
