"""Whether a point's blocking ratio is what was asked, read from the point's `blocking_fidelity`
block (the harness judges each point; this only reads the verdict and says why)."""

from __future__ import annotations

from typing import Any


def fidelity_problem(point: dict[str, Any]) -> str | None:
    """Why a point's blocking ratio is not what was asked (None when it is, or when the file
    predates blocking_fidelity: those count as within tolerance)."""
    fid = point.get("blocking_fidelity")
    if not isinstance(fid, dict) or fid.get("within_tolerance") is not False:
        return None
    achieved, blocked = fid.get("achieved_median"), fid.get("blocked_only_median")
    got = f"achieved {achieved:.3f}" if isinstance(achieved, (int, float)) else "achieved n/a"
    if isinstance(blocked, (int, float)):
        got += f", blocked-only {blocked:.3f}"
    tol = fid.get("tolerance")
    reason = f"; {fid['reason']}" if fid.get("reason") else ""
    return (f"requested {fid.get('requested', point['blocking']['ratio'])}, {got}"
            + (f", tolerance {tol}" if isinstance(tol, (int, float)) else "") + reason)
