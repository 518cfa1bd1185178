"""Imports sit at the top of each module, where a reader sees what it depends on; only the heavy,
optional packages (the model stack, ONNX, Redis/RQ, PostgreSQL, the browser driver) are imported
inside the functions that need them, so a process that never uses them never loads them."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "triagebot"
HEAVY_OPTIONAL = ("sentence_transformers", "transformers", "torch", "tokenizers", "onnx",
                  "onnxruntime", "rq", "redis", "psycopg", "selenium")


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
                found += [(str(path.relative_to(PACKAGE)), fn.name, name) for name in names
                          if name.split(".")[0] not in HEAVY_OPTIONAL]
    assert found == []
