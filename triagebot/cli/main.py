"""Command line: a thin client over the same objects the service uses.

Settings are read here, once, before any command runs (``Settings.from_env``: the environment, over
``.env`` in the working directory or the ``--env-file`` named), and handed to the command. Every
error a user can cause (a missing file, a bad JSON, an index that is not one, a bad setting) ends
in one line on stderr and exit status 2; nothing prints a traceback."""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from triagebot import __version__
from triagebot.cli import app_setup as cli_setup
from triagebot.cli import bench as cli_bench
from triagebot.cli import doctor as cli_doctor
from triagebot.cli import maint as cli_maint
from triagebot.cli import model as cli_model
from triagebot.cli import service as cli_service
from triagebot.cli.errors import UserError, describe
from triagebot.cli.issue_file import InputError, read_issue
from triagebot.comment import render as comment
from triagebot.comment.posting import worth_posting
from triagebot.domain import taxonomy
from triagebot.domain.models import Triage
from triagebot.domain.repo_config import RepoConfig
from triagebot.engine import embed, evaluate
from triagebot.engine.build import build_index
from triagebot.engine.crossfit import load_fold_vectors
from triagebot.engine.dataset import read_labelled
from triagebot.engine.index import IssueIndex
from triagebot.learning.live import LiveEngine
from triagebot.service.assembly import build_engine, renderer
from triagebot.settings import DEFAULT_ENV_FILE, Settings, in_effect

MAX_INPUT_BYTES = 8 * 1024 * 1024


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # --env-file may stand anywhere (``triagebot serve --env-file prod.env``): taken out first
    given, rest = _env_file_option().parse_known_args(argv)
    args = parser.parse_args(rest)
    args.env_file = given.env_file  # `triagebot setup` writes there
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        settings = Settings.from_env(env_file=given.env_file or DEFAULT_ENV_FILE,
                                     required=given.env_file is not None)
        logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
        with in_effect(settings):
            return int(args.func(args, settings) or 0)
    except KeyboardInterrupt:
        print("triagebot: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `triagebot triage … | head`: the reader left; say nothing
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # noqa: BLE001 - the one place a user-facing error becomes a line
        print(f"triagebot: error: {describe(exc)}", file=sys.stderr)
        return 2


def _env_file_option(add_help: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=add_help)
    parser.add_argument("--env-file", type=Path, default=None, metavar="FILE",
                        help="settings file of KEY=VALUE lines (default: .env in the working "
                             "directory, when there is one); the environment wins over it")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="triagebot", description=__doc__.splitlines()[0],
                                     parents=[_env_file_option()])
    parser.add_argument("--version", action="version", version=f"triagebot {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND")
    for register in _COMMANDS:
        register(sub)
    return parser


# -- index ----------------------------------------------------------------------------------------

def _register_index(sub) -> None:  # type: ignore[no-untyped-def]
    index = sub.add_parser("index", help="build or inspect an index").add_subparsers(metavar="ACTION")
    build = index.add_parser("build", help="build an index from labelled issues (JSON lines)")
    build.add_argument("--data", required=True, type=Path, help="labelled issues, one JSON a line")
    build.add_argument("--out", required=True, type=Path, help="index directory to write")
    build.add_argument("--fold-vectors", type=Path, default=None, metavar="DIR",
                       help="per-fold vectors of a fine-tuned encoder (scripts/train_encoder.py) "
                            "for an honest calibration")
    build.set_defaults(func=cmd_index_build)
    info = index.add_parser("info", help="describe an index")
    info.add_argument("--index", type=Path, default=None)
    info.set_defaults(func=cmd_index_info)
    cli_maint.register_index_actions(index)


def cmd_index_build(args: argparse.Namespace, settings: Settings) -> int:
    records = read_labelled(args.data)
    parts, fold_vectors = _fold_vectors(args.fold_vectors, len(records))
    embedder = embed.default_embedder(settings.embedder)
    _warn_if_flattered(embedder.name, fold_vectors, "the calibration's thresholds")
    index, rate = build_index(records, embedder, fold_vectors=fold_vectors, parts=parts)
    index.save(args.out)
    print(f"indexed {len(index)} issues into {args.out} ({rate:.1f} issues/s)")
    return 0


def cmd_index_info(args: argparse.Namespace, settings: Settings) -> int:
    index = IssueIndex.load(args.index or settings.cli_index)
    repos = Counter(item.repo for item in index.items)
    print(f"{len(index)} issues, embedder {index.embedder_name} ({index.dim} dims)")
    for repo, count in repos.most_common():
        print(f"  {repo}: {count}")
    return 0


# -- triage ---------------------------------------------------------------------------------------

def _register_triage(sub) -> None:  # type: ignore[no-untyped-def]
    triage = sub.add_parser("triage", help="triage issues (JSON or Markdown files, - for stdin)")
    triage.add_argument("files", nargs="+", metavar="FILE",
                        help="JSON {title, body, repo?, number?} or Markdown (first line = title)")
    triage.add_argument("--index", type=Path, default=None, help="index directory (default: seed index)")
    out = triage.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--comment", action="store_true", help="print the Markdown comment the bot would post")
    triage.add_argument("--llm", action="store_true", help="use the configured LLM (TRIAGEBOT_LLM_*)")
    triage.set_defaults(func=cmd_triage)


def cmd_triage(args: argparse.Namespace, settings: Settings) -> int:
    """``--comment`` writes exactly the body the service would post (same engine, LLM refiner and
    renderer, from ``service.assembly``), with no newline added. Several files share one engine:
    each answer follows a ``==> FILE <==`` line (``--json``: one object a line, with ``"file"``);
    a file that cannot be read gets its one error line and the others are still triaged (exit 2
    at the end)."""
    several = len(args.files) > 1
    if args.files.count("-") > 1:
        raise UserError("stdin (-) can be read only once")
    issues: list[tuple[str, Any]] = []
    failed = 0
    for path in args.files:
        try:
            issues.append((path, read_issue(path, MAX_INPUT_BYTES)))
        except InputError as exc:
            if not several:
                raise
            print(f"triagebot: error: {describe(exc)}", file=sys.stderr)
            failed += 1
    if not issues:
        return 2
    engine = load_engine(settings, args.index, use_llm=args.llm)
    render = renderer(settings, engine) if args.comment else None
    for n, (path, issue) in enumerate(issues):
        result = engine.triage(issue)
        if args.json:
            shape = triage_json(result)
            print(json.dumps({"file": path, **shape} if several else shape, ensure_ascii=False))
            continue
        if several:
            print(f"{'' if n == 0 else chr(10)}==> {path} <==")
        if render is not None:
            sys.stdout.write(render(result) + ("\n" if several else ""))
        else:
            print(comment.render_text(result))
    return 2 if failed else 0


def load_engine(settings: Settings, index_dir: Path | None, use_llm: bool = False) -> LiveEngine:
    """The service's engine (``assembly.build_engine``); ``--llm`` without an LLM configured is
    the user's error, not a silent offline run."""
    if use_llm and settings.llm is None:
        raise UserError("--llm needs TRIAGEBOT_LLM_MODEL (and TRIAGEBOT_LLM_BASE_URL or OPENAI_API_KEY)")
    return build_engine(settings, index_dir, use_llm=use_llm)


def triage_json(result: Triage) -> dict[str, Any]:
    """The documented JSON shape of ``triagebot triage --json``."""
    out: dict[str, Any] = {
        dim: {"id": p.id, "name": p.name, "confidence": p.confidence, "abstained": p.abstained,
              "evidence": p.evidence}
        for dim in taxonomy.ALL_DIMENSIONS for p in [result.prediction(dim)]
    }
    out["similar"] = [
        {"repo": s.repo, "number": s.number, "url": s.url, "title": s.title, "score": s.score,
         "labels": s.labels.model_dump(), "resolution": s.resolution, "resolved": s.resolved,
         "cross_repo": s.cross_repo, "for_reporter": s.for_reporter, "fix_held_back": s.fix_held_back}
        for s in result.similar
    ]
    out["missing_info"] = [m.model_dump() for m in result.missing_info]
    out["environment"] = result.environment.model_dump(exclude_none=True)
    out["source"] = result.source
    return out


# -- eval -----------------------------------------------------------------------------------------

def _register_eval(sub) -> None:  # type: ignore[no-untyped-def]
    ev = sub.add_parser("eval", help="evaluate on labelled issues (held out, or k-fold CV)")
    ev.add_argument("--data", required=True, type=Path)
    ev.add_argument("--index", type=Path, default=None, help="index to evaluate against")
    ev.add_argument("--cv", type=int, default=0, metavar="K", help="k-fold cross-validation on --data")
    ev.add_argument("--json", action="store_true", help="print exactly one JSON object")
    ev.add_argument("--llm", action="store_true", help="evaluate with the configured LLM on")
    ev.add_argument("--predictions", type=Path, default=None, metavar="OUT.jsonl",
                    help="write what the comment would state for each issue (the backtest)")
    ev.add_argument("--fold-vectors", type=Path, default=None, metavar="DIR",
                    help="with --cv: per-fold vectors of a fine-tuned encoder (its own folds)")
    ev.set_defaults(func=cmd_eval)


def _renderer(repos: set[str]) -> Callable[[Any], str]:
    """The public comment as the service renders it, for the backtest's lengths."""
    allowed = frozenset(repos)
    return lambda triage: comment.render(triage, allowed_repos=allowed)


def _posting_decision() -> Callable[[Any], bool]:
    """Whether the service would comment at all, under the default ``comment:`` setting
    (``useful``): the function the triage job calls, so ``posted`` and ``comment_chars`` are what
    would be posted."""
    mode = RepoConfig().comment
    return lambda triage: worth_posting(triage, mode)


def _warn_if_flattered(embedder: str, fold_vectors: object, what: str) -> None:
    """The fine-tuned encoder has seen the shared issues' labels: cross-validating with it flatters
    every figure unless each fold's vectors come from an encoder tuned without that fold."""
    if fold_vectors is None and embedder.startswith(embed.TUNED_PREFIX):
        print(f"warning: {embedder} was fine-tuned on labelled issues; without --fold-vectors "
              f"(scripts/train_encoder.py --folds-dir DIR) {what} are flattered for issues it saw",
              file=sys.stderr)


def _fold_vectors(directory: Path | None, n: int):  # type: ignore[no-untyped-def]
    if directory is None:
        return None, None
    try:
        return load_fold_vectors(directory, n)
    except (OSError, ValueError) as exc:
        raise UserError(f"--fold-vectors: {exc}") from None


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:

    records = read_labelled(args.data)
    log = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr))
    start = time.perf_counter()
    if args.cv:
        if args.cv < 2 or args.cv > len(records):
            raise UserError(f"--cv needs 2..{len(records)} folds")
        if args.llm:
            raise UserError("--cv with --llm is not supported; build an index and use --index")
        parts, fold_vectors = _fold_vectors(args.fold_vectors, len(records))
        embedder = embed.default_embedder(settings.embedder)
        _warn_if_flattered(embedder.name, fold_vectors, "these figures")
        result = evaluate.cross_validate(records, embedder, args.cv,
                                         progress=log, fold_vectors=fold_vectors, parts=parts,
                                         render=_renderer({r.repo for r in records}),
                                         worth_posting=_posting_decision())
    else:
        engine = load_engine(settings, args.index, use_llm=args.llm)
        overlap = sum(r.number is not None and engine.index.row_of((r.repo, r.number)) is not None
                      for r in records)
        if overlap:
            log(f"note: {overlap} of {len(records)} issues are in the index and trained its "
                "classifier (they are never their own neighbour); use --cv for held-out figures")
        result = evaluate.evaluate_on_index(engine, records, render=_renderer(engine.repos()),
                                            worth_posting=_posting_decision())
        stats = getattr(engine.refiner, "stats", None)
        if callable(stats):
            result["llm"] = stats().model_dump()
    result["seconds"] = round(time.perf_counter() - start, 1)
    rows = result.pop("predictions", [])
    if args.predictions:
        with open(args.predictions, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    print(json.dumps(result) if args.json else format_report(result))
    return 0


def format_report(result: dict) -> str:  # type: ignore[type-arg]
    lines = [f"n = {result['n']}",
             f"{'dimension':<22}{'n':>5}{'forced':>8}{'acc':>8}{'macroF1':>9}{'kappa':>8}{'cover':>8}"
             f"{'cov.acc':>9}"]
    for dim in taxonomy.LABEL_DIMENSIONS:
        m = result[dim]
        lines.append(f"{dim:<22}{m['n']:>5}{m['forced_accuracy']:>8.3f}{m['accuracy']:>8.3f}{m['macro_f1']:>9.3f}"
                     f"{m['kappa']:>8.3f}{m['coverage']:>8.3f}{m['covered_accuracy']:>9.3f}")
    lines.append(f"retrieval hit@5 = {result['retrieval']['hit_at_5']:.3f}")
    stated = result.get("stated")
    if stated:
        lines.append("what the comment states (precision of stated labels, share of issues stated):")
        for dim in ("stage", "symptom", "root_cause", "fix_pattern", "distributed_specific", "not_a_bug"):
            m = stated[dim]
            shown = "-" if m["precision"] is None else f"{m['precision']:.3f}"
            lines.append(f"  {dim:<22} precision {shown:>6}  coverage {m['coverage']:.3f}  ({m['stated']} stated)")
        links = stated["links"]
        shown = "-" if links["precision"] is None else f"{links['precision']:.3f}"
        same = "-" if links.get("same_problem") is None else f"{links['same_problem']:.3f}"
        lines.append(f"  links: {links['per_issue']:.2f} per issue, precision {shown} (same symptom), "
                     f"{same} (same symptom and root cause), "
                     f"issues with a relevant link {links['issues_with_relevant_link']:.3f}")
        if links.get("offered_as_fixes"):
            lines.append(f"  links offered as fixes: {links['offered_as_fixes']}, "
                         f"{links['fixes_same_problem']:.3f} the same problem")
        if links.get("related_for_reporter"):
            lines.append(f"  related threads shown to the reporter: {links['related_for_reporter']}, "
                         f"{links['related_for_reporter_same_problem']:.3f} the same problem, "
                         f"{links['related_for_reporter_same_symptom']:.3f} the same symptom")
        lines.append(f"  posted on {stated['posted']['share']:.3f} of issues, "
                     f"median comment {stated['posted']['median_chars']} chars; labelled without "
                     f"a comment {stated['posted'].get('labelled_silently', 0.0):.3f}")
    if "llm" in result:
        llm = result["llm"]
        lines.append(f"llm: {llm['calls']} calls, {llm['cache_hits']} cache hits, "
                     f"{llm['tokens_in']} tokens in / {llm['tokens_out']} out, "
                     f"p50 {llm['latency_p50_ms']:.0f} ms, p99 {llm['latency_p99_ms']:.0f} ms, "
                     f"{llm['refined']} refined, fallbacks {llm['fallbacks'] or 'none'}")
    for dim, base in result.get("baselines", {}).items():
        lines.append(f"baseline {dim:<12} majority {base['majority']:.3f}  "
                     f"keyword rules {base['keyword_rules']:.3f}")
    return "\n".join(lines)


_COMMANDS: list[Callable] = [  # type: ignore[type-arg]
    cli_setup.register, cli_doctor.register, _register_index, _register_triage, _register_eval,
    cli_service.register, cli_maint.register, cli_bench.register, cli_model.register,
]


if __name__ == "__main__":
    sys.exit(main())
