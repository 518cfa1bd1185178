"""Clean vs as-filed: how much the trackers' issue templates move what the bot reads and says.

Why: the labelled data are rewritten, clean reports; real issues arrive inside the repositories'
templates (headings, unfilled hints and ``[e.g. ...]`` placeholders, ``_No response_``,
checklists, ``ds_report``/``collect_env`` dumps, thousands of rank lines). If that boilerplate
reaches the 256-token window, unrelated reports look alike and the calibrated confidences stop
meaning what cross-validation measured. Each shared issue is poured into its repository's real
template (``tests/support/templates.py``, seeded) and triaged both ways with the shipped index.

The shipped encoder saw these issues, so absolute accuracy is flattered; the clean-vs-filed
*differences* are what this measures.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/template_robustness.py --data ../shared/data/issues.jsonl \
        [--index index] [--sample 300] [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from support.templates import as_filed, filing  # noqa: E402
from triagebot.domain import environment, taxonomy  # noqa: E402
from triagebot.domain.models import Issue, Triage  # noqa: E402
from triagebot.engine.triage import Engine  # noqa: E402
from triagebot.text import signal  # noqa: E402

DIMS = (*taxonomy.DIMENSIONS, *taxonomy.FLAGS)
_WORD = re.compile(r"[a-z0-9_]+(?:[.'-][a-z0-9_]+)*")
ENV_FIELDS = ("framework", "framework_version", "torch", "cuda_torch", "cuda_nvcc", "nccl", "python",
              "gpu_model", "gpu_count", "nodes", "os", "launcher")


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def window_stats(clean: str, filed: str) -> tuple[float, float]:
    """Jaccard of the two windows' word sets, and the share of the filed window's tokens that
    the clean window does not have (boilerplate, dumps, rank lines)."""
    a, b = set(tokens(clean)), tokens(filed)
    jac = len(a & set(b)) / max(len(a | set(b)), 1)
    foreign = sum(t not in a for t in b) / max(len(b), 1)
    return jac, foreign


def compare(t0: Triage, t1: Triage, counts: Counter[str]) -> None:
    for dim in DIMS:
        if t0.prediction(dim).id != t1.prediction(dim).id:
            counts[f"forced:{dim}"] += 1
        s0, s1 = t0.stated(dim), t1.stated(dim)
        counts["stated_clean"] += s0 is not None
        if s0 is not None and s1 is None:
            counts["dropped"] += 1
        elif s0 is not None and s1 != s0:
            counts["changed"] += 1
        elif s0 is None and s1 is not None:
            counts["new"] += 1
            counts["new_different"] += s1 != t0.prediction(dim).id if dim in taxonomy.DIMENSIONS else \
                s1 != (t0.prediction(dim).id == "yes")
    l0, l1 = {(s.repo, s.number) for s in t0.similar}, {(s.repo, s.number) for s in t1.similar}
    counts["links_clean"] += len(l0)
    counts["links_lost"] += len(l0 - l1)
    counts["links_new"] += len(l1 - l0)
    counts["link_sets_same"] += l0 == l1
    counts["issues_with_links"] += bool(l0 or l1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "issues.jsonl"))
    ap.add_argument("--index", default=str(ROOT / "index"))
    ap.add_argument("--sample", type=int, default=300, help="issues to triage (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-engine", action="store_true", help="only the text and environment measures")
    args = ap.parse_args()

    rows = [json.loads(line) for line in Path(args.data).read_text(encoding="utf-8").splitlines() if line]
    if args.sample and args.sample < len(rows):
        rows = random.Random(args.seed).sample(rows, args.sample)
    engine = None if args.no_engine else Engine.load(args.index)
    counts: Counter[str] = Counter()
    jacs, foreigns = [], []
    for r in rows:
        filed = as_filed(r["repo"], r["number"], r["title"], r["body"], args.seed)
        s0, s1 = signal.signal_text(r["title"], r["body"]), signal.signal_text(r["title"], filed)
        jac, foreign = window_stats(s0, s1)
        jacs.append(jac)
        foreigns.append(foreign)
        counts["window_same"] += s0 == s1
        e0 = environment.extract(signal.full_text(r["title"], r["body"]))
        e1 = environment.extract(signal.full_text(r["title"], filed))
        how = filing(r["repo"], r["number"], args.seed)[0]
        if how.dump is None and not how.long_log:  # only the template itself can add facts
            counts["no_dump"] += 1
            invented = [f for f in ENV_FIELDS if getattr(e0, f) is None and getattr(e1, f) is not None]
            counts["env_invented_issues"] += bool(invented)
            for f in invented:
                counts[f"env_invented:{f}"] += 1
        if engine is not None:
            t0 = engine.triage(Issue(repo=r["repo"], number=r["number"], title=r["title"], body=r["body"]))
            t1 = engine.triage(Issue(repo=r["repo"], number=r["number"], title=r["title"], body=filed))
            compare(t0, t1, counts)
    n = len(rows)
    jacs.sort()
    print(f"issues: {n} (seed {args.seed})")
    print("| measure | clean vs as-filed |\n|---|---|")
    print(f"| signal window identical | {counts['window_same']}/{n} |")
    print(f"| window word Jaccard, median (p10) | {jacs[n // 2]:.3f} ({jacs[n // 10]:.3f}) |")
    print(f"| filed window tokens not in clean window, mean | {sum(foreigns) / n:.3f} |")
    print(f"| issues with a fact read from the template alone (no dump, no long log pasted) | "
          f"{counts['env_invented_issues']}/{counts['no_dump']} |")
    invented = ", ".join(f"{k.split(':')[1]} {v}" for k, v in sorted(counts.items()) if k.startswith("env_invented:"))
    print(f"| ... which facts | {invented or '-'} |")
    if engine is None:
        return
    for dim in DIMS:
        print(f"| forced choice changed: {dim} | {counts[f'forced:{dim}']}/{n} |")
    print(f"| labels stated on clean | {counts['stated_clean']} |")
    print(f"| ... dropped on as-filed | {counts['dropped']} |")
    print(f"| ... changed to another label | {counts['changed']} |")
    print(f"| labels newly stated on as-filed | {counts['new']} (differing from the clean forced choice: "
          f"{counts['new_different']}) |")
    print(f"| linked issues on clean | {counts['links_clean']} |")
    print(f"| ... links lost / links new | {counts['links_lost']} / {counts['links_new']} |")
    print(f"| issues whose set of links is unchanged (of those with any) | "
          f"{counts['link_sets_same'] - (n - counts['issues_with_links'])}/{counts['issues_with_links']} |")


if __name__ == "__main__":
    main()
