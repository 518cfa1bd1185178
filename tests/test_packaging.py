"""A plain, non-editable install runs with no checkout beside it: the wheel carries the seed index
(``index/`` and its subfolders, as ``triagebot/seed_index``) and the LLM's prompts, the build
prints no warning, and ``triagebot triage examples/nccl_timeout.md`` works from a fresh venv in
an unrelated directory. (The fresh venv borrows this venv's installed dependencies through a
path file, so torch is not downloaded again; triagebot itself comes only from the wheel.)"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("setup.py", "pyproject.toml", "README.md", "triagebot", "index", "prompts")


def _clean_env() -> dict[str, str]:
    drop = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "COVERAGE_PROCESS_START", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("TRIAGEBOT_")}


@pytest.mark.integration
def test_a_wheel_installed_in_a_fresh_venv_triages_without_a_checkout(tmp_path: Path) -> None:
    source = tmp_path / "src"
    for name in SOURCES:  # a copy: the build writes build/ and *.egg-info next to the sources
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy(src, source / name)
    (source / "index" / "extra").mkdir()  # a subfolder, as index/encoder/ will be
    (source / "index" / "extra" / "probe.json").write_text("{}")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                            "--no-build-isolation", "-v", "-w", str(tmp_path / "dist")],
                           capture_output=True, text=True, env=_clean_env(), timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    warnings = [line for line in (build.stdout + build.stderr).splitlines() if "warning" in line.lower()]
    assert warnings == [], "\n".join(warnings)
    [wheel] = (tmp_path / "dist").glob("triagebot-*.whl")

    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                    "--no-index", "-q", str(wheel)], check=True, env=_clean_env(), timeout=300)

    elsewhere = tmp_path / "somewhere"
    elsewhere.mkdir()
    (elsewhere / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "nccl_timeout.md", elsewhere / "examples" / "nccl_timeout.md")
    where = subprocess.run([str(python), "-c", "import triagebot, triagebot.settings as s, triagebot.llm.prompt as p;"
                            "print(triagebot.__file__); print(s.DEFAULT_INDEX); print(p.prompts_dir())"],
                           cwd=elsewhere, capture_output=True, text=True, env=_clean_env(), check=True)
    package, index, prompts = (Path(line) for line in where.stdout.split())
    assert package.is_relative_to(venv) and index == package.parent / "seed_index", where.stdout
    assert (index / "manifest.json").is_file() and (index / "extra" / "probe.json").is_file()
    assert (prompts / "triage_v1.system.md").is_file() and prompts.is_relative_to(venv)

    triage = subprocess.run([str(venv / "bin" / "triagebot"), "triage", "examples/nccl_timeout.md"],
                            cwd=elsewhere, capture_output=True, text=True, env=_clean_env(), timeout=600)
    assert triage.returncode == 0, triage.stderr
    assert "stage" in triage.stdout.lower() and "error" not in triage.stderr.lower(), triage.stdout + triage.stderr
