"""Packaging beyond what pyproject.toml can say: the seed index lives at the top of the repository
(``index/``, where the docs and the Docker image expect it) but must ride in the wheel, subfolders
included (``index/encoder/``), so a plain ``pip install .`` runs ``triagebot triage`` with no
checkout beside it. Each folder under ``index/`` becomes a data-only package under
``triagebot/seed_index`` (listed, so setuptools has nothing to warn about);
``settings.DEFAULT_INDEX`` finds it there. The LLM's ``prompts/`` goes to ``triagebot/prompts``
the same way (``llm.prompt.prompts_dir``). Everything else is in pyproject.toml."""
from __future__ import annotations

from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).resolve().parent
SEED = "triagebot.seed_index"


def seed_packages() -> dict[str, str]:
    """Package name -> folder (relative, as setuptools wants) for ``index/`` and its subfolders."""
    root = HERE / "index"
    folders = [root] + sorted(p for p in root.rglob("*") if p.is_dir() and p.name != "__pycache__")
    return {".".join([SEED, *f.relative_to(root).parts]): f.relative_to(HERE).as_posix() for f in folders}


seeds = {**seed_packages(), "triagebot.prompts": "prompts"}  # the LLM's templates, likewise
setup(
    packages=sorted(set(find_namespace_packages(include=["triagebot", "triagebot.*"])) | set(seeds)),
    package_dir=seeds,
    package_data={"triagebot.review": ["templates/review/*.html"], **{name: ["*"] for name in seeds}},
    include_package_data=False,
)
