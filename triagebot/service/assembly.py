"""How the engine, its LLM refiner and the comment renderer are put together: one function each,
used by the worker (``wiring.build_deps``) and by ``triagebot triage`` / ``eval`` alike, so the CLI
prints byte for byte what the bot would post for the same issue, index and settings. Also which
index the service reads and writes (``prepare_index``: the live copy in the data directory), used by
the worker, the web tier's review page and ``index sync`` / ``retrain``.

Nothing heavy is imported here beyond the engine itself, so the CLI pays for no web framework."""
from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from triagebot.comment import render as comment
from triagebot.domain.models import Triage
from triagebot.engine.embed import load_embedder
from triagebot.learning.live import LiveEngine, LiveIndex
from triagebot.learning.shared import SharedIndex, open_shared
from triagebot.llm.client import refiner_for
from triagebot.logs import emit
from triagebot.settings import DEFAULT_INDEX, Settings
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore

log = logging.getLogger("triagebot.service.assembly")


def build_engine(settings: Settings, index_dir: Path | None = None, *, use_llm: bool = True,
                 shared: SharedIndex | None = None) -> LiveEngine:
    """The engine over ``index_dir`` (default: the CLI's index, ``Settings.cli_index``; the service
    passes its live index, ``prepare_index``), following it on disk, or over ``shared`` (the
    database's index, ``shared_index``), with the configured embedder backend and, when
    ``use_llm`` and an LLM is configured, the LLM refiner gated by the same per-dimension
    thresholds as the offline classifier."""
    live: LiveIndex | SharedIndex = shared if shared is not None else LiveIndex(index_dir or settings.cli_index)
    embedder = load_embedder(live.current().embedder_name, settings.embedder or None, settings.cache_dir)
    refiner = refiner_for(settings.llm) if use_llm else None
    return LiveEngine(live, embedder, refiner)


def shared_index(settings: Settings, db: Database) -> SharedIndex:
    """The database's index (``Settings.index_in_database``), seeded on first start from
    ``Settings.seed_index`` by whichever process gets there first."""
    return open_shared(LearnedStore(db), settings.seed_index)


def prepare_index(settings: Settings) -> Path:
    """The service's live index directory; on first start (no TRIAGEBOT_INDEX, nothing in the
    data directory yet) a copy of the shipped seed index. The copy is made beside the target
    and renamed into place, so two processes starting together never see half an index."""
    target = settings.index_dir
    if settings.index is not None or target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".index-seed-", dir=target.parent))
    try:
        shutil.copytree(DEFAULT_INDEX, staging, dirs_exist_ok=True)
        staging.rename(target)
        emit(log, "seeded the live index", index=str(target), seed=str(DEFAULT_INDEX))
    except OSError:
        if not target.exists():  # another process won the rename: use its copy
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


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
