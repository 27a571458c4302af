"""Numbers as the tables and charts print them: the one place the package formats a value, below
everything that renders (compare's Markdown, charts, the report, answer)."""

from __future__ import annotations


def fmt_value(x: float | None) -> str:
    """Compact, fixed-width-ish numbers for table cells (12.3k, 1.05M, 0.123)."""
    if x is None:
        return "n/a"
    ax = abs(x)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if ax >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


def fmt_p(p: float | None) -> str:
    if p is None:
        return "p=n/a"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"
