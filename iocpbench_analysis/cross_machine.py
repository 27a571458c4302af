"""Comparing machines (`iocpbench-compare --cross-machine`): do two machines rank the settings
the same way?

A gate compares two builds on one machine; a user comparing two machines wants to know how
each point's throughput differs (compare's per-point ratios and CIs, reused as they are) and
whether the machines agree on *which setting* to use. This module answers the second: the
matched points are grouped by everything but their concurrency and pool (match.spec_key
without those two axes: the same workload and its parameters, port unless --ignore-port,
blocking ratio and kind, work, dispatch, working set, and any axis added later), and within a
group the settings' median throughputs on each machine are compared by Spearman's rank
correlation, with each machine's best setting (the highest median).

Pure functions over matched (base, new) point pairs; the Markdown is compare.py's.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .lazy_stats import sps
from .match import SpecKey, identity, point_label, spec_key
from .metrics import DEFAULT_METRIC, central_value

# The axes a group's points differ in: the settings being ranked.
SETTING_AXES = frozenset({"concurrency", "pool"})
# Below this many settings a rank correlation says nothing (with two it can only be +1 or -1).
MIN_SETTINGS = 3
# The settings are ranked by throughput, whatever metric compare's ratios are of: the best
# setting is the one with the highest median throughput (as `answer` and the report pick it).
RANK_METRIC = DEFAULT_METRIC


@dataclass(frozen=True)
class SettingMedians:
    """One setting of a group (its concurrency and pool specs) and its median throughput on
    each machine."""

    concurrency: str
    pool: str
    base: float
    new: float

    @property
    def label(self) -> str:
        return f"c={self.concurrency}/p={self.pool}"


@dataclass(frozen=True)
class RankComparison:
    """One group of matched points that differ only in concurrency and pool: Spearman's rho
    over the settings' medians (None, with the reason, when it cannot be computed) and each
    machine's best setting."""

    group: str  # a label of the group: a point label without c= and p=
    settings: tuple[SettingMedians, ...]
    rho: float | None
    reason: str | None  # why rho is None
    base_best: SettingMedians | None
    new_best: SettingMedians | None
    # Matched settings left out of the ranking: no median throughput on a side.
    unranked: tuple[str, ...] = ()

    @property
    def best_differs(self) -> bool | None:
        """Whether the machines' best settings differ (None without settings)."""
        if self.base_best is None or self.new_best is None:
            return None
        return self.base_best.label != self.new_best.label


def group_key(point: dict[str, Any], *, ignore_port: bool = False) -> SpecKey:
    """A point's identity (match.spec_key) without its concurrency and pool."""
    return tuple(item for item in spec_key(point, ignore_port=ignore_port) if item[0] not in SETTING_AXES)


def group_label(point: dict[str, Any], *, ignore_port: bool = False) -> str:
    """match.point_label of the point without its concurrency and pool:
    "post/emulated/b=0.5/w=10"."""
    wild = {k: v for k, v in point.items() if k != "id"}
    wild["concurrency"] = wild["pool"] = "*"
    return point_label(wild, ignore_port=ignore_port).replace("/c=*/p=*", "")


def setting_of(point: dict[str, Any]) -> tuple[str, str]:
    """The (concurrency, pool) specs of a point, spelled one way (match.normalize_spec)."""
    ident = identity(point)
    return str(ident["concurrency"]), str(ident["pool"])


def _usable(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def best_setting(settings: Sequence[SettingMedians], side: str) -> SettingMedians | None:
    """The setting with the highest median on `side` ("base" or "new"); the first of equals."""
    if not settings:
        return None
    return max(settings, key=lambda s: getattr(s, side))  # max keeps the first of equal keys


def spearman(base: Sequence[float], new: Sequence[float]) -> tuple[float | None, str | None]:
    """Spearman's rank correlation of two machines' medians over the same settings, or None
    and why: fewer than MIN_SETTINGS settings, or one machine's medians all equal."""
    if len(base) != len(new):
        raise ValueError("base and new must hold the same settings")
    if len(base) < MIN_SETTINGS:
        return None, f"{len(base)} setting(s), fewer than {MIN_SETTINGS}: no rank correlation"
    for side, values in (("base", base), ("new", new)):
        if len(set(values)) == 1:
            return None, f"every setting has the same median on {side}: no ranking"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        statistic, _ = sps.spearmanr(base, new)
        rho = float(statistic)
    if not math.isfinite(rho):
        return None, "the rank correlation is undefined"
    return rho, None


def rank_comparison(group: str, settings: Sequence[SettingMedians],
                    unranked: Iterable[str] = ()) -> RankComparison:
    """Rho and the best setting of each machine for one group's settings."""
    rho, reason = spearman([s.base for s in settings], [s.new for s in settings])
    return RankComparison(group, tuple(settings), rho, reason, best_setting(settings, "base"),
                          best_setting(settings, "new"), tuple(unranked))


def rank_groups(pairs: Iterable[tuple[dict[str, Any], dict[str, Any]]], *, ignore_port: bool = False,
                metric: str = RANK_METRIC) -> list[RankComparison]:
    """One RankComparison per group of matched (base, new) pairs, in the order of their first
    pair. The median of a side is the point's summary median (else its runs' median); a
    setting without one on either side is left out and named in `unranked`."""
    groups: dict[SpecKey, tuple[str, list[SettingMedians], list[str]]] = {}
    for base, new in pairs:
        key = group_key(base, ignore_port=ignore_port)
        _, settings, unranked = groups.setdefault(key, (group_label(base, ignore_port=ignore_port), [], []))
        conc, pool = setting_of(base)
        b, n = central_value(base, metric), central_value(new, metric)
        if _usable(b) and _usable(n):
            settings.append(SettingMedians(conc, pool, float(b), float(n)))  # type: ignore[arg-type]
        else:
            unranked.append(f"c={conc}/p={pool}")
    return [rank_comparison(label, settings, unranked) for label, settings, unranked in groups.values()]
