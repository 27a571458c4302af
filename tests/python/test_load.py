"""Loading and validation: every bad input is one InputError with a one-line message, and
the schema accepts what the harness writes (the synthetic template) and the probe output."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from synthetic import FIXTURES, SEMANTICS, bad_inputs, make_results, write_json

from iocpbench_analysis.load import InputError, load_results, load_schema


def _validate(data: Any, name: str = "results.schema.json") -> None:
    results, probe = load_schema("results.schema.json"), load_schema("probe.schema.json")
    schema = {"results.schema.json": results, "probe.schema.json": probe}[name]
    resolver = jsonschema.RefResolver.from_schema(schema, store={results["$id"]: results, probe["$id"]: probe})
    jsonschema.validators.validator_for(schema)(schema, resolver=resolver).validate(data)


def test_schemas_are_valid_json_schemas() -> None:
    for name in ("results.schema.json", "probe.schema.json"):
        schema = load_schema(name)
        jsonschema.validators.validator_for(schema).check_schema(schema)


def test_template_validates_and_loads(tmp_path: Path) -> None:
    data = make_results(tune=True)
    _validate(data)
    res = load_results(write_json(tmp_path / "a.json", data))
    assert res.machine["logical_cpus"] == 2 and len(res.points) == 12


def test_extra_fields_are_allowed(tmp_path: Path) -> None:
    data = make_results()
    data["future_field"] = {"x": 1}
    data["points"][0]["summary"]["queue_delay_us"] = {"p50": {"median": 1}}
    data["points"][0]["runs"][0]["new_metric"] = 3
    data["machine"]["numa_nodes"] = 2
    load_results(write_json(tmp_path / "a.json", data))


def test_optional_run_fields_may_be_absent(tmp_path: Path) -> None:
    data = make_results(probe=False)
    for p in data["points"]:
        p["runs"] = [{"repetition": 0}]
        p.pop("workload_params")
        p.pop("id")
    load_results(write_json(tmp_path / "a.json", data))


def test_probe_output_validates_and_requires_every_semantic() -> None:
    probe = {"backend": "win32", "wine": True,
             "semantics": {s: {"value": s != "abandon_on_close", "evidence": "..."} for s in SEMANTICS}}
    _validate(probe, "probe.schema.json")
    broken = copy.deepcopy(probe)
    del broken["semantics"]["lifo_wakeup"]
    with pytest.raises(jsonschema.ValidationError):
        _validate(broken, "probe.schema.json")
    data = make_results()
    data["machine"]["probe"]["semantics"]["fifo_packets"] = {"value": "yes"}
    with pytest.raises(jsonschema.ValidationError):
        _validate(data)


def test_every_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    for name, (path, expect) in bad_inputs(tmp_path).items():
        with pytest.raises(InputError) as err:
            load_results(path)
        message = str(err.value)
        assert expect in message, (name, message)
        assert "\n" not in message, name
        assert str(path) in message, name


def _auto_fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "auto_pool.json").read_text(encoding="utf-8"))
    return data


def test_every_real_fixture_validates() -> None:
    files = sorted(FIXTURES.glob("*.json"))
    assert FIXTURES / "auto_pool.json" in files
    for path in files:
        _validate(json.loads(path.read_text(encoding="utf-8")))


def test_auto_pool_fields_are_described() -> None:
    data = _auto_fixture()
    auto = next(p for p in data["points"] if p["pool"]["spec"] == "auto")
    assert {"auto"} <= set(auto["pool"]) and "pool_mean_threads" in auto["summary"]
    assert all("pool_sizing" in r for r in auto["runs"])
    broken: dict[str, Any] = {
        "timeline item of 3": lambda p: p["runs"][0]["pool_sizing"]["timeline_ms_threads"].append([1.0, 2, 3]),
        "timeline item of 1": lambda p: p["runs"][0]["pool_sizing"]["timeline_ms_threads"].append([1.0]),
        "negative threads": lambda p: p["runs"][0]["pool_sizing"]["timeline_ms_threads"].append([1.0, -1]),
        "fractional threads": lambda p: p["runs"][0]["pool_sizing"]["timeline_ms_threads"].append([1.0, 2.5]),
        "time as text": lambda p: p["runs"][0]["pool_sizing"]["timeline_ms_threads"].append(["1.0", 2]),
        "no timeline": lambda p: p["runs"][0]["pool_sizing"].pop("timeline_ms_threads"),
        "grows as text": lambda p: p["runs"][0]["pool_sizing"].update(grows="6"),
        "auto without max": lambda p: p["pool"]["auto"].pop("max"),
        "percent over 100": lambda p: p["pool"]["auto"].update(shrink_above_cpu_pct=190.0),
        "pool_mean_threads not a stat": lambda p: p["summary"]["pool_mean_threads"].pop("median"),
    }
    for name, mutate in broken.items():
        bad = copy.deepcopy(data)
        mutate(next(p for p in bad["points"] if p["pool"]["spec"] == "auto"))
        try:
            _validate(bad)
        except jsonschema.ValidationError:
            continue
        pytest.fail(f"{name}: validated")


def test_auto_pool_fields_are_optional(tmp_path: Path) -> None:
    data = _auto_fixture()
    for p in data["points"]:
        p["pool"].pop("auto", None)
        p["summary"].pop("pool_mean_threads", None)
        for r in p["runs"]:
            r.pop("pool_sizing", None)
    _validate(data)
    load_results(write_json(tmp_path / "old_writer.json", data))
