"""Turning any exception that reaches the CLI into one line a user can act on."""
from __future__ import annotations

from triagebot.cli.issue_file import InputError
from triagebot.engine.dataset import DataError
from triagebot.engine.index import IndexError_
from triagebot.settings import ConfigError


class UserError(Exception):
    """A problem with what the user gave us; printed as one line."""


def describe(exc: BaseException) -> str:
    """Known, user-caused errors keep their message; anything else names its type too."""
    if isinstance(exc, (UserError, DataError, IndexError_, InputError, ConfigError)):
        return " ".join(str(exc).split())  # one line, whatever the message holds
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}: {exc.filename or ''}".strip(": ")
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message}"[:500]
