"""Imports sit at the top of each module, where a reader sees what it depends on; only the heavy
packages (the model stack, ONNX, Redis/RQ, PostgreSQL and its pool, the browser driver, and the two clients
that each have one owner module: openai in llm/client.py, PyGithub with requests and urllib3 in
github/client.py) are imported inside the functions that need them, so a process that never uses
them never loads them, and ``triagebot`` starts without them."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "triagebot"
HEAVY_OPTIONAL = ("sentence_transformers", "transformers", "torch", "tokenizers", "onnx",
                  "onnxruntime", "rq", "redis", "psycopg", "psycopg_pool", "selenium",
                  "sklearn",  # scikit-learn: only when an index is calibrated (engine.relevance.fit)
                  "safetensors")  # the base weights: only when a fine-tuned graph is loaded
# Heavy clients, each imported by its one owner module only, inside functions (about 0.5 s and
# 0.3 s of start-up otherwise).
HEAVY_CLIENTS = {"openai": "llm/client.py", "github": "github/client.py",
                 "requests": "github/client.py", "urllib3": "github/client.py"}


def test_only_heavy_optional_packages_are_imported_inside_functions() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                else:
                    continue
                where = str(path.relative_to(PACKAGE))
                found += [(where, fn.name, name) for name in names
                          if name.split(".")[0] not in HEAVY_OPTIONAL
                          and HEAVY_CLIENTS.get(name.split(".")[0]) != where]
    assert found == []


def test_the_cli_starts_without_loading_openai_or_pygithub() -> None:
    probe = ("import sys, triagebot.cli.main; "
             "print(sorted(m for m in ('openai', 'github', 'requests') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT)}, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
