"""`iocpbench --version`: the version, the build and the results schema a results file will carry."""
from __future__ import annotations

import json
import re

from binary_runner import run


def test_version_names_the_build_and_the_schema_that_results_carry(binary, tmp_path):
    shown = run(binary, "--version", timeout=30)
    assert shown.returncode == 0, shown.stderr
    match = re.fullmatch(r"iocpbench (\S+) \(git (\S+), (\S*), (.+)\), results schema (\d+)\n", shown.stdout)
    assert match, shown.stdout
    version, git, _build_type, _compiler, schema = match.groups()
    info = run(binary, "info", "--json", str(tmp_path / "info.json"), timeout=60)
    assert info.returncode == 0, info.stderr
    tool = json.loads((tmp_path / "info.json").read_text())["tool"]
    assert (tool["version"], tool["git"]) == (version, git)
    # The schema version a run writes is the one --version names.
    out = tmp_path / "run.json"
    done = run(binary, "run", "--workload", "post", "--duration", "0.1", "--warmup", "0.05",
               "--json", str(out), timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["schema_version"] == int(schema)


def test_version_is_not_bad_input_and_writes_nothing(binary, tmp_path):
    shown = run(binary, "--version", "run", "--json", str(tmp_path / "x.json"), timeout=30)
    assert shown.returncode == 0
    assert not (tmp_path / "x.json").exists()
