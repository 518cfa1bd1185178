"""Turning any exception that reaches the CLI into one line a user can act on."""
from __future__ import annotations


def describe(exc: BaseException) -> str:
    """Known, user-caused errors keep their message; anything else names its type too."""
    from triagebot.cli import UserError
    from triagebot.config import ConfigError
    from triagebot.dataset import DataError
    from triagebot.index import IndexError_
    from triagebot.issue_file import InputError

    if isinstance(exc, (UserError, DataError, IndexError_, InputError, ConfigError)):
        return " ".join(str(exc).split())  # one line, whatever the message holds
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}: {exc.filename or ''}".strip(": ")
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message}"[:500]
