"""Match points across results files by their *specs*, not their values.

"2N+2" is 6 on a 2-CPU laptop and 130 on a 64-CPU server; matching on the spec is what lets
the two line up (architecture.md, "Cross-machine comparison").

The match key is the whole identity the harness writes for a point: every field of the point
but an explicit list of fields that are not identity (its id, runs, summary, fidelity, failed
runs; its run length and warm-up, which compare checks file against file). So an axis added to
the harness later keeps points apart by default. A few fields are spelled one way first (specs,
ratios, machine-local workload parameters), and a field older files lack reads as its default
(FIELD_DEFAULTS), so those files still meet newer ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Workload parameters that name places on one machine rather than the experiment (a file
# workload's path): two machines never share them, so they must not keep points apart.
MACHINE_LOCAL_PARAMS = frozenset({"path", "file", "filename", "dir", "directory", "device"})
# Parameters of the measurement, not of the workload (the post workload's latency sample: one
# packet in K timed): they change how latency is sampled, not what runs, so files written
# before and after such a parameter existed still line up.
MEASUREMENT_PARAMS = frozenset({"latency_sample_every"})
# How the emulation brings I/O completions to the port on Linux (`--completion-path`): the same
# experiment (workload, port, concurrency, pool, blocking), reached by a different route, so
# an older file (thread) still meets a newer one (port). compare says which each side used.
EMULATION_PARAMS = frozenset({"completion_path"})
# A user's consent (`--overwrite`: write into a file iocpbench did not create), not the experiment.
CONSENT_PARAMS = frozenset({"overwrite"})
# The workloads whose I/O takes a completion path, and what a point of theirs without the
# field was measured on: results recorded only `port` while `thread` was the default, and every
# point records its path since `port` became the default (results.schema.json).
IO_WORKLOADS = frozenset({"file", "socket"})
LEGACY_COMPLETION_PATH = "thread"

# A point's fields that are not its identity: what was measured and what was derived from the
# spec (the id is written from the same fields). Every other field is part of the match key.
# peer_commands (a file point's fio and DiskSpd lines) is written from the spec and names a path.
NON_IDENTITY_FIELDS = frozenset({"id", "runs", "summary", "blocking_fidelity", "failures", "peer_commands"})
# The run length and warm-up: settings of the measurement, checked file against file by
# compare (a gate refuses files that differ in them) rather than keeping points apart.
RUN_LENGTH_FIELDS = frozenset({"duration_s", "warmup_s"})
# Within an identity field, parts that randomise a point rather than define it (an open-loop
# point's arrival seed, as the sweep's own seed).
NON_IDENTITY_SUBFIELDS = {"open_loop": frozenset({"seed"})}
# What a point without the field was measured with (the harness writes dispatch, metrics,
# dequeue_batch and affinity on every point, working_set_kib only when one was given,
# skip_on_success on file and socket points; older files lack them): the point id names a
# dispatch only when it is not shared, a working set only when there is one, a dequeue batch
# only when it is not 1 (one packet per remove, as before batches), skip on success only when it
# was asked for (--skip-on-success on or off; "default" is each workload's own behaviour), a
# placement only when it is not none (no thread pinned).
NO_AFFINITY = {"workers": "none", "load": "none"}
FIELD_DEFAULTS: dict[str, Any] = {"dispatch": "shared", "metrics": True, "working_set_kib": 0,
                                  "dequeue_batch": "1", "skip_on_success": "default",
                                  "affinity": NO_AFFINITY}

# The key: (field, canonical JSON of its normalised value) pairs, sorted by field.
SpecKey = tuple[tuple[str, str], ...]


AUTO = "auto"
# auto[:MIN:MAX[:GROW_BELOW_PCT:SHRINK_ABOVE_PCT[:IDLE_MS]]], as the harness's pool_spec.hpp;
# its parameters go in groups, and only a whole group can be left to its defaults.
AUTO_DEFAULTS = ("N", "4N", "75", "90", "100")
AUTO_GROUPS = ((0, 2), (2, 4), (4, 5))


# The pools a controller thread sizes (hill[:MIN:MAX], formula[:MIN:MAX[:PERIOD_MS]],
# stall:LIMIT_MS[:MAX]); the harness writes them normalised already.
CONTROLLERS = ("hill", "formula", "stall")


def _keyword(text: str) -> str:
    return text.split(":", 1)[0].lower()


def is_auto_spec(spec: Any) -> bool:
    """A self-sizing pool ("auto", "auto:1:8", or a controller: "hill", "stall:100") rather
    than a thread count."""
    text = "".join(str(spec).split())
    return text[:4].lower() == AUTO or _keyword(text) in CONTROLLERS


def _same_param(a: str, b: str) -> bool:
    # Percentages may be written 75 or 75.0; counts (N, 4N) compare as text.
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def _normalize_auto(text: str) -> str:
    """An auto spec as the harness writes it ("AUTO:n:4n:75:90" -> "auto"): the keyword
    lower-case, the N of the counts capital, and whole groups at their defaults dropped from
    the right, so a file that spelled the defaults out still meets one that did not."""
    params = [p.upper() for p in text[len(AUTO):].split(":")[1:]]
    for start, end in reversed(AUTO_GROUPS):
        if len(params) == end and all(_same_param(params[i], AUTO_DEFAULTS[i]) for i in range(start, end)):
            params = params[:start]
    return ":".join([AUTO, *params])


def normalize_spec(spec: Any) -> str:
    """Spell a concurrency/pool spec one way: no spaces, capital N ("2n + 2" -> "2N+2");
    an auto pool keeps its lower-case keyword ("Auto:1:4n" -> "auto:1:4N")."""
    text = "".join(str(spec).split())
    if _keyword(text) in CONTROLLERS:
        keyword, _, params = text.partition(":")
        return keyword.lower() + (":" + params.upper() if params else "")
    if is_auto_spec(text):
        return _normalize_auto(text)
    return text.upper()


def _kept_params(params: Any) -> dict[str, Any]:
    """The workload parameters that are part of the experiment (as written)."""
    if not isinstance(params, dict):
        return {}
    ignored = MACHINE_LOCAL_PARAMS | MEASUREMENT_PARAMS | EMULATION_PARAMS | CONSENT_PARAMS
    return {k: v for k, v in params.items() if k not in ignored}


def params_key(params: Any) -> str:
    if not isinstance(params, dict):
        return ""
    return json.dumps(_kept_params(params), sort_keys=True, separators=(",", ":"))


def completion_path(point: dict[str, Any]) -> str | None:
    """The completion path a point's I/O took (file, socket), by the schema's rule: the
    recorded one, else thread; None for a workload without I/O (post)."""
    if str(point.get("workload")) not in IO_WORKLOADS:
        return None
    params = point.get("workload_params")
    path = params.get("completion_path") if isinstance(params, dict) else None
    return str(path) if isinstance(path, str) and path else LEGACY_COMPLETION_PATH


def completion_paths(points: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many I/O points took each completion path, by path name (sorted)."""
    counts: dict[str, int] = {}
    for p in points:
        path = completion_path(p)
        if path is not None:
            counts[path] = counts.get(path, 0) + 1
    return dict(sorted(counts.items()))


def canonical(value: Any) -> Any:
    """A value spelled one way: numbers as floats rounded to 1e-6 (ratios come from decimal
    text, 0.5 or 0.9, and a writer may add float noise or write 512 as 512.0), objects and
    lists element by element."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return round(float(value), 6)
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return str(value)


def _spec_text(value: Any) -> str:
    # {"spec": "2N", "value": 4}: the spec is the identity, the value this machine's reading of it.
    return normalize_spec(value["spec"] if isinstance(value, dict) else value)


def _skip_requested(value: Any) -> str:
    # {"requested": "on", "asked": true}: what was requested is the identity; what the
    # workload then asked of the OS follows from it and the OS (Linux asks nothing).
    return str(value.get("requested", "default") if isinstance(value, dict) else value)


def _affinity_specs(value: Any) -> dict[str, str]:
    # {"workers": {"spec": "compact", "order": ..., "cpus": [...]}, "load": {...}}: the specs are
    # the identity; the CPUs they gave are this machine's reading of them.
    value = value if isinstance(value, dict) else {}
    specs = {}
    for part in NO_AFFINITY:
        given = value.get(part, "none")
        specs[part] = str(given.get("spec", "none") if isinstance(given, dict) else given)
    return specs


def affinity_specs(point: dict[str, Any]) -> dict[str, str]:
    """The placements a point asked for, {"workers": SPEC, "load": SPEC}: "none" for a point
    without the field (nothing was pinned before placements existed)."""
    return _affinity_specs(point.get("affinity", NO_AFFINITY))


def _blocking(value: Any) -> dict[str, Any]:
    blocking = dict(value) if isinstance(value, dict) else {"ratio": value}
    blocking["kind"] = str(blocking.get("kind", ""))
    return canonical(blocking)


# Fields spelled one way before they are compared; every other identity field as canonical.
NORMALIZERS: dict[str, Any] = {
    "workload": str,
    "port": str,
    "workload_params": lambda params: canonical(_kept_params(params)),
    "concurrency": _spec_text,
    "pool": _spec_text,
    "dequeue_batch": _spec_text,
    "skip_on_success": _skip_requested,
    "affinity": _affinity_specs,
    "blocking": _blocking,
}


def _normalized(name: str, value: Any) -> Any:
    normal = NORMALIZERS.get(name, canonical)(value)
    if name in NON_IDENTITY_SUBFIELDS and isinstance(normal, dict):
        normal = {k: v for k, v in normal.items() if k not in NON_IDENTITY_SUBFIELDS[name]}
    return normal


def identity(point: dict[str, Any], *, ignore_port: bool = False) -> dict[str, Any]:
    """A point's identity, normalised: every field but NON_IDENTITY_FIELDS and
    RUN_LENGTH_FIELDS, with FIELD_DEFAULTS for the fields it lacks; the port left out when
    points are matched across port backends."""
    fields = {**FIELD_DEFAULTS, **point}
    return {name: _normalized(name, value) for name, value in fields.items()
            if name not in NON_IDENTITY_FIELDS and name not in RUN_LENGTH_FIELDS
            and not (ignore_port and name == "port")}


def _at_default(name: str, normal: Any) -> bool:
    return name in FIELD_DEFAULTS and normal == _normalized(name, FIELD_DEFAULTS[name])


def spec_key(point: dict[str, Any], *, ignore_port: bool = False) -> SpecKey:
    """The identity of a point across machines, hashable: workload and its params, port,
    dispatch, concurrency and pool specs, blocking ratio and kind, work per completion, working
    set, dequeue batch, skip on success, the workers' and load threads' placements (their specs,
    not the CPUs they gave), metrics, and any field the harness adds later (identity)."""
    ident = identity(point, ignore_port=ignore_port)
    return tuple((name, json.dumps(ident[name], sort_keys=True, separators=(",", ":"))) for name in sorted(ident))


def dequeue_batch_spec(point: dict[str, Any]) -> str:
    """The dequeue batch a point asked for, as its spec ("8", "N"): "1" for a point without
    the field (a file written before batches took one packet per remove)."""
    return str(_normalized("dequeue_batch", point.get("dequeue_batch", FIELD_DEFAULTS["dequeue_batch"])))


def _fmt_num(x: float) -> str:
    return f"{x:g}"


# The fields point_label spells itself; any other it adds as name=value where not at its default.
LABELLED_FIELDS = frozenset({"workload", "port", "concurrency", "pool", "blocking", "work_us", "workload_params"})


def _label_value(value: Any) -> str:
    if isinstance(value, float):
        return _fmt_num(value)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def point_label(point: dict[str, Any], *, ignore_port: bool = False) -> str:
    """A short human label; the harness's `id` when it wrote one (it is what users grep for)."""
    if isinstance(point.get("id"), str) and point["id"] and not ignore_port:
        return point["id"]
    ident = identity(point, ignore_port=ignore_port)
    blocking = ident.get("blocking") if isinstance(ident.get("blocking"), dict) else {}
    parts = [str(ident.get("workload", "?"))]
    if "port" in ident:
        parts.append(ident["port"])
    parts += [f"c={ident.get('concurrency', '?')}", f"p={ident.get('pool', '?')}",
              f"b={_label_value(blocking.get('ratio', '?'))}", f"w={_label_value(ident.get('work_us', '?'))}"]
    if blocking.get("kind") and blocking["kind"] != "sleep":
        parts.append(blocking["kind"])
    for name in sorted(ident):
        if name == "affinity":
            # As the harness's ids name them: /affinity=SPEC, /load-affinity=SPEC, only when pinned.
            parts += [f"{label}={ident[name][part]}" for part, label in
                      (("workers", "affinity"), ("load", "load-affinity")) if ident[name][part] != "none"]
        elif name not in LABELLED_FIELDS and not _at_default(name, ident[name]):
            parts.append(f"{name}={_label_value(ident[name])}")
    params = params_key(point.get("workload_params"))
    if params not in ("", "{}"):
        parts.append(params)
    return "/".join(parts)


@dataclass
class Matching:
    """Pairs of (base, new) points with the same spec key, and the leftovers of each side."""

    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    only_base: list[dict[str, Any]] = field(default_factory=list)
    only_new: list[dict[str, Any]] = field(default_factory=list)
    # Points whose key repeats within one file (a resumed sweep gone wrong, two files
    # concatenated): the first one is paired, the rest listed here; compare fails on any.
    base_duplicates: list[dict[str, Any]] = field(default_factory=list)
    new_duplicates: list[dict[str, Any]] = field(default_factory=list)

    @property
    def duplicates(self) -> list[dict[str, Any]]:
        return self.base_duplicates + self.new_duplicates


def index_points(
    points: Iterable[dict[str, Any]], *, ignore_port: bool = False
) -> tuple[dict[SpecKey, dict[str, Any]], list[dict[str, Any]]]:
    index: dict[SpecKey, dict[str, Any]] = {}
    dups: list[dict[str, Any]] = []
    for p in points:
        key = spec_key(p, ignore_port=ignore_port)
        if key in index:
            dups.append(p)
        else:
            index[key] = p
    return index, dups


def match_points(
    base: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]], *, ignore_port: bool = False
) -> Matching:
    """Pair points by spec key, in the base file's order."""
    base_index, base_dups = index_points(base, ignore_port=ignore_port)
    new_index, new_dups = index_points(new, ignore_port=ignore_port)
    m = Matching(base_duplicates=base_dups, new_duplicates=new_dups)
    for key, bp in base_index.items():
        if key in new_index:
            m.pairs.append((bp, new_index[key]))
        else:
            m.only_base.append(bp)
    m.only_new = [np for key, np in new_index.items() if key not in base_index]
    return m
