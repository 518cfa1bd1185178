"""Accuracy of the keyword-rule baseline (``rules.classify``) on the labelled development set.

Usage: python scripts/rules_baseline.py [path/to/issues.jsonl]
Rows whose gold label is ``unknown`` are skipped for that dimension; symptom, root cause and fix
pattern are also reported given the gold stage would be right only when the stage matches, so the
plain accuracy here is end-to-end (a wrong stage makes the symptom wrong too).
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from triagebot.domain import environment, rules, taxonomy
from triagebot.text.signal import full_text

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "issues.jsonl"


def main(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for row in rows:
        text = full_text(row.get("title", ""), row.get("body", ""))
        env = environment.extract(text)
        predicted = rules.classify(text, env)
        predicted["distributed_specific"] = rules.distributed(text, env)
        for dimension in (*taxonomy.DIMENSIONS, "distributed_specific"):
            gold = row["labels"].get(dimension)
            if gold in (None, taxonomy.UNKNOWN):
                continue
            total[dimension] += 1
            right[dimension] += predicted[dimension] == gold
    print(f"rules baseline on {len(rows)} issues ({path.name}); unknown gold labels skipped")
    for dimension in (*taxonomy.DIMENSIONS, "distributed_specific"):
        n = total[dimension]
        print(f"  {dimension:<22} {right[dimension] / max(n, 1):6.1%}  (n={n})")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
