"""How the engine, its LLM refiner and the comment renderer are put together: one function each,
used by the worker (``wiring.build_deps``) and by ``triagebot triage`` / ``eval`` alike, so the CLI
prints byte for byte what the bot would post for the same issue, index and settings.

Nothing heavy is imported here beyond the engine itself, so the CLI pays for no web framework."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from triagebot.comment import render as comment
from triagebot.domain.models import Triage
from triagebot.engine.classify import THRESHOLDS
from triagebot.engine.embed import load_embedder
from triagebot.learning.live import LiveEngine, LiveIndex
from triagebot.llm.client import refiner_for
from triagebot.settings import Settings


def build_engine(settings: Settings, index_dir: Path | None = None, *, use_llm: bool = True) -> LiveEngine:
    """The engine over ``index_dir`` (default: the configured index), following it on disk, with
    the configured embedder backend and, when ``use_llm`` and an LLM is configured, the LLM refiner
    gated by the same per-dimension thresholds as the offline classifier."""
    live = LiveIndex(index_dir or settings.index)
    embedder = load_embedder(live.current().embedder_name, settings.embedder or None, settings.cache_dir)
    refiner = refiner_for(settings.llm, thresholds=THRESHOLDS) if use_llm else None
    return LiveEngine(live, embedder, refiner)


def renderer(settings: Settings, engine: object) -> Callable[[Triage], str]:
    """Comments link only to issues of the indexed repositories (``engine.repos()`` at render
    time; an engine without an index links nowhere else), and are scanned for the configured secret
    values before anything is posted."""
    secrets = [s.get_secret_value() for s in (settings.webhook_secret, settings.webhook_secret_old,
                                               settings.private_key, settings.openai_api_key)
               if s.get_secret_value()]

    def render(triage: Triage) -> str:
        repos = frozenset(getattr(engine, "repos", lambda: ())())
        return comment.render(triage, allowed_repos=repos, secrets=secrets)

    return render
