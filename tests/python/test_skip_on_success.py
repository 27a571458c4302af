"""Skip on success (`--skip-on-success`) in the analysis: a point without the field (a file
written before the flag, or a post point) reads as "default", a point that asked for on or off
is another point than the default, and only what was requested is the identity (what the
workload then asked of the OS follows from it and the OS)."""

from __future__ import annotations

import copy
from typing import Any

from synthetic import make_point

from iocpbench_analysis.match import match_points, spec_key


def with_skip(point: dict[str, Any], requested: str, asked: bool) -> dict[str, Any]:
    """The point as the harness writes it: the field, and the id naming a request other than
    the default."""
    q = copy.deepcopy(point)
    q["skip_on_success"] = {"requested": requested, "asked": asked}
    if "id" in q and requested != "default":
        q["id"] += f"/skip={requested}"
    return q


def test_a_point_without_the_field_reads_as_the_default() -> None:
    old = make_point(workload="socket")
    assert "skip_on_success" not in old
    new = with_skip(old, "default", True)
    assert spec_key(old) == spec_key(new)
    assert match_points([old], [new]).pairs


def test_on_and_off_are_points_of_their_own() -> None:
    base = make_point(workload="file")
    on, off = with_skip(base, "on", True), with_skip(base, "off", False)
    keys = {spec_key(base), spec_key(on), spec_key(off)}
    assert len(keys) == 3
    m = match_points([base], [on])
    assert not m.pairs and m.only_base == [base] and m.only_new == [on]


def test_what_was_asked_of_the_os_is_not_the_identity() -> None:
    # The default socket point asks for the mode on Windows and asks nothing on Linux.
    windows = with_skip(make_point(workload="socket"), "default", True)
    linux = with_skip(make_point(workload="socket"), "default", False)
    assert spec_key(windows) == spec_key(linux)
    assert match_points([windows], [linux]).pairs
