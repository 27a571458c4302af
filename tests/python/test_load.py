"""Loading and validation: every bad input is one InputError with a one-line message, and
the schema accepts what the harness writes (the synthetic template) and the probe output."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from synthetic import SEMANTICS, bad_inputs, make_results, write_json

from analysis.load import InputError, load_results, load_schema


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
