"""Controlled pool specs (hill, formula, stall) in the analysis: spelled one way, counted as
self-sizing pools (sorted after the fixed sizes, labelled by their spec), never upper-cased
as if they were counts."""
from __future__ import annotations

from iocpbench_analysis.grid import spec_order
from iocpbench_analysis.match import is_auto_spec, normalize_spec


def test_controller_specs_keep_their_keyword_and_capital_n():
    assert normalize_spec("hill") == "hill"
    assert normalize_spec("Hill:1:4n") == "hill:1:4N"
    assert normalize_spec("stall:100") == "stall:100"
    assert normalize_spec("formula:n:4n:250") == "formula:N:4N:250"
    assert normalize_spec("2n+2") == "2N+2"
    assert normalize_spec("auto:N:4N") == "auto"


def test_controller_specs_are_self_sizing_and_sort_after_fixed_sizes():
    for spec in ("hill", "formula:1:2N", "stall:10", "auto"):
        assert is_auto_spec(spec), spec
    for spec in ("N", "2N+2", "8", "4"):
        assert not is_auto_spec(spec), spec
    specs = {"hill": 16, "N": 4, "2N": 8, "stall:10": 16}
    assert sorted(specs, key=lambda s: spec_order(s, specs[s])) == ["N", "2N", "hill", "stall:10"]
