"""Charts as inline SVG strings, made in Python: no JavaScript library, no network fetch.

Every function returns one ``<svg>`` element, sized by its ``viewBox`` so the page's CSS can
scale it; every text in it is escaped. Points carry ``<title>`` tooltips (the browser shows
them on hover), which is all the interaction a dashboard of curves needs.

>>> svg = line_chart([Series("train", [(0, 0.1), (1, 0.4), (2, 0.5)])], title="reward")
>>> svg.startswith("<svg") and "<path" in svg and "train" in svg
True
>>> "<rect" in heatmap(["task/a"], ["0-9"], [[(3, 4)]])
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = [
    "HELDOUT",
    "TRAIN",
    "BarSeries",
    "Series",
    "bar_chart",
    "heatmap",
    "line_chart",
    "pass_colour",
    "sparkline",
]

TRAIN = "#2563eb"  # blue
HELDOUT = "#ea580c"  # orange: the two splits must be told apart at a glance
_AXIS, _GRID, _TEXT, _EMPTY = "#94a3b8", "#e2e8f0", "#334155", "#f1f5f9"
_FONT = "font-family='system-ui, sans-serif'"


@dataclass(frozen=True)
class Series:
    """A named line: ``(x, y)`` points in x order; ``dashed`` draws it dashed."""

    name: str
    points: Sequence[tuple[float, float]]
    colour: str = TRAIN
    dashed: bool = False


@dataclass(frozen=True)
class BarSeries:
    """One bar per group (None: no data); ``counts`` are shown in the tooltips."""

    name: str
    values: Sequence[float | None]
    counts: Sequence[int] = ()
    colour: str = TRAIN


def _f(x: float) -> str:
    return f"{x:.1f}"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out, v = [], first
    while v <= hi + step * 1e-9:
        out.append(round(v, 10))
        v += step
    return out


def _label(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.1e}"


def _open(width: int, height: int, title: str) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' "
        f"width='{width}' height='{height}' role='img' aria-label='{escape(title, quote=True)}' "
        f"class='chart' {_FONT}>"
    )


def line_chart(
    series: Sequence[Series],
    *,
    title: str = "",
    y_range: tuple[float, float] | None = (0.0, 1.0),
    y_label: str = "",
    x_label: str = "step",
    width: int = 640,
    height: int = 260,
) -> str:
    """Lines on shared axes (train against held-out, say); ``y_range=None`` fits the data."""
    pts = [p for s in series for p in s.points if math.isfinite(p[1])]
    left, right, top, bottom = 48, 16, 28 if title else 12, 40
    out = [_open(width, height, title or y_label or "chart")]
    if title:
        out.append(f"<text x='{left}' y='18' font-size='13' font-weight='600' fill='{_TEXT}'>")
        out.append(f"{escape(title)}</text>")
    if not pts:
        out.append(
            f"<text x='{width / 2}' y='{height / 2}' text-anchor='middle' font-size='13' "
            f"fill='{_AXIS}'>no data yet</text></svg>"
        )
        return "".join(out)
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    if y_range is None:
        y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
        pad = (y1 - y0) * 0.08 or abs(y1) * 0.1 or 1.0
        y0, y1 = y0 - pad, y1 + pad
    else:
        y0, y1 = y_range
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    pw, ph = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return top + ph - (min(max(y, y0), y1) - y0) / (y1 - y0) * ph

    for t in _ticks(y0, y1, 4):
        out.append(
            f"<line x1='{left}' x2='{left + pw}' y1='{_f(sy(t))}' y2='{_f(sy(t))}' "
            f"stroke='{_GRID}'/><text x='{left - 6}' y='{_f(sy(t) + 4)}' text-anchor='end' "
            f"font-size='11' fill='{_TEXT}'>{_label(t)}</text>"
        )
    for t in _ticks(x0, x1, 6):
        if t == int(t) or x1 - x0 < 6:
            out.append(
                f"<text x='{_f(sx(t))}' y='{top + ph + 16}' text-anchor='middle' font-size='11' "
                f"fill='{_TEXT}'>{_label(t)}</text>"
            )
    out.append(
        f"<line x1='{left}' x2='{left + pw}' y1='{top + ph}' y2='{top + ph}' stroke='{_AXIS}'/>"
        f"<text x='{left + pw / 2}' y='{height - 6}' text-anchor='middle' font-size='11' "
        f"fill='{_AXIS}'>{escape(x_label)}</text>"
    )
    if y_label:
        out.append(
            f"<text transform='translate(12 {top + ph / 2}) rotate(-90)' text-anchor='middle' "
            f"font-size='11' fill='{_AXIS}'>{escape(y_label)}</text>"
        )
    for i, s in enumerate(series):
        good = [p for p in s.points if math.isfinite(p[1])]
        if not good:
            continue
        d = " ".join(
            f"{'M' if j == 0 else 'L'}{_f(sx(x))},{_f(sy(y))}" for j, (x, y) in enumerate(good)
        )
        dash = " stroke-dasharray='6 4'" if s.dashed else ""
        out.append(
            f"<path class='series' data-series='{escape(s.name, quote=True)}' d='{d}' "
            f"fill='none' stroke='{s.colour}' stroke-width='2.2' stroke-linejoin='round'{dash}/>"
        )
        for x, y in good if len(good) <= 60 else good[-1:]:
            out.append(
                f"<circle cx='{_f(sx(x))}' cy='{_f(sy(y))}' r='3' fill='{s.colour}'>"
                f"<title>{escape(s.name)} · step {_label(x)}: {y:.3f}</title></circle>"
            )
        if len(series) < 2:
            continue  # one line needs no legend: the title names it
        # The legend, top right, one entry per series.
        lx = left + pw - 120 * (len(series) - i)
        out.append(
            f"<line x1='{lx}' x2='{lx + 18}' y1='{top - 10 if title else 8}' "
            f"y2='{top - 10 if title else 8}' stroke='{s.colour}' stroke-width='2.5'{dash}/>"
            f"<text x='{lx + 24}' y='{top - 6 if title else 12}' font-size='11' "
            f"fill='{_TEXT}'>{escape(s.name[:16])}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def sparkline(points: Sequence[tuple[float, float]], *, width: int = 120, height: int = 28) -> str:
    """A tiny trend line without axes (y in [0, 1]), for tables."""
    good = [p for p in points if math.isfinite(p[1])]
    out = [_open(width, height, "trend")]
    if len(good) >= 2:
        x0, x1 = good[0][0], good[-1][0]
        span = (x1 - x0) or 1

        def sx(x: float) -> float:
            return 2 + (x - x0) / span * (width - 4)

        def sy(y: float) -> float:
            return height - 2 - max(0.0, min(1.0, y)) * (height - 4)

        d = " ".join(f"{'M' if j == 0 else 'L'}{_f(sx(x))},{_f(sy(y))}" for j, (x, y) in
                     enumerate(good))  # fmt: skip
        out.append(f"<path d='{d}' fill='none' stroke='{TRAIN}' stroke-width='1.6'/>")
        out.append(f"<circle cx='{_f(sx(good[-1][0]))}' cy='{_f(sy(good[-1][1]))}' r='2.2' ")
        out.append(f"fill='{TRAIN}'/>")
    out.append("</svg>")
    return "".join(out)


def bar_chart(
    groups: Sequence[str],
    series: Sequence[BarSeries],
    *,
    title: str = "",
    x_label: str = "",
    width: int = 640,
    height: int = 240,
) -> str:
    """Grouped vertical bars of values in [0, 1], one group per label in ``groups``."""
    left, right, top, bottom = 48, 16, 28 if title else 12, 44
    pw, ph = width - left - right, height - top - bottom
    out = [_open(width, height, title or "bars")]
    if title:
        out.append(
            f"<text x='{left}' y='18' font-size='13' font-weight='600' fill='{_TEXT}'>"
            f"{escape(title)}</text>"
        )
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + ph - t * ph
        out.append(
            f"<line x1='{left}' x2='{left + pw}' y1='{_f(y)}' y2='{_f(y)}' stroke='{_GRID}'/>"
            f"<text x='{left - 6}' y='{_f(y + 4)}' text-anchor='end' font-size='11' "
            f"fill='{_TEXT}'>{t:g}</text>"
        )
    n = max(1, len(groups))
    slot = pw / n
    bar = min(36.0, slot * 0.8 / max(1, len(series)))
    for g, name in enumerate(groups):
        cx = left + slot * (g + 0.5)
        out.append(
            f"<text x='{_f(cx)}' y='{top + ph + 16}' text-anchor='middle' font-size='11' "
            f"fill='{_TEXT}'>{escape(name)}</text>"
        )
        for k, s in enumerate(series):
            v = s.values[g] if g < len(s.values) else None
            if v is None:
                continue
            count = s.counts[g] if g < len(s.counts) else None
            x = cx - bar * len(series) / 2 + k * bar
            h = max(1.0, v * ph)
            tip = f"{s.name} · {name}: {v:.2f}" + (f" ({count} trajectories)" if count else "")
            out.append(
                f"<rect class='bar' x='{_f(x + 1)}' y='{_f(top + ph - h)}' width='{_f(bar - 2)}' "
                f"height='{_f(h)}' rx='2' fill='{s.colour}'><title>{escape(tip)}</title></rect>"
                f"<text x='{_f(x + bar / 2)}' y='{_f(top + ph - h - 4)}' text-anchor='middle' "
                f"font-size='10' fill='{_TEXT}'>{v:.2f}</text>"
            )
    out.append(
        f"<line x1='{left}' x2='{left + pw}' y1='{top + ph}' y2='{top + ph}' stroke='{_AXIS}'/>"
    )
    if x_label:
        out.append(
            f"<text x='{left + pw / 2}' y='{height - 6}' text-anchor='middle' font-size='11' "
            f"fill='{_AXIS}'>{escape(x_label)}</text>"
        )
    for k, s in enumerate(series):
        lx = left + pw - 110 * (len(series) - k)
        out.append(
            f"<rect x='{lx}' y='{top - 18 if title else 2}' width='12' height='10' rx='2' "
            f"fill='{s.colour}'/><text x='{lx + 16}' y='{top - 9 if title else 11}' "
            f"font-size='11' fill='{_TEXT}'>{escape(s.name)}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def pass_colour(rate: float) -> str:
    """Red (0) through amber (0.5) to green (1), as ``#rrggbb``."""
    stops = ((0.0, (220, 38, 38)), (0.5, (250, 204, 21)), (1.0, (22, 163, 74)))
    rate = max(0.0, min(1.0, rate))
    for (a, ca), (b, cb) in itertools.pairwise(stops):
        if rate <= b:
            w = (rate - a) / (b - a)
            r, g, bl = (round(x + (y - x) * w) for x, y in zip(ca, cb, strict=True))
            return f"#{r:02x}{g:02x}{bl:02x}"
    return "#16a34a"


def heatmap(
    rows: Sequence[str],
    cols: Sequence[str],
    cells: Sequence[Sequence[tuple[int, int] | None]],
    *,
    row_links: Sequence[str] | None = None,
    title: str = "",
    cell: int = 22,
    label_width: int = 230,
) -> str:
    """A grid of pass rates: ``cells[r][c]`` is ``(passed, total)`` or None (not sampled).

    Colour is the pass rate (:func:`pass_colour`); rows link to ``row_links[r]`` when given.
    """
    top = 34 if title else 14
    width = label_width + cell * max(1, len(cols)) + 16
    height = top + cell * len(rows) + 34
    out = [_open(width, height, title or "heatmap")]
    if title:
        out.append(
            f"<text x='4' y='18' font-size='13' font-weight='600' fill='{_TEXT}'>"
            f"{escape(title)}</text>"
        )
    for r, name in enumerate(rows):
        y = top + r * cell
        short = name if len(name) <= 34 else name[:15] + "…" + name[-17:]
        text = (
            f"<text x='{label_width - 8}' y='{y + cell * 0.68:.1f}' text-anchor='end' "
            f"font-size='11' fill='{_TEXT}'><title>{escape(name)}</title>{escape(short)}</text>"
        )
        if row_links is not None:
            text = f"<a href='{escape(row_links[r], quote=True)}'>{text}</a>"
        out.append(text)
        for c, value in enumerate(cells[r]):
            x = label_width + c * cell
            if value is None or value[1] == 0:
                fill, tip = _EMPTY, f"{name} · steps {cols[c]}: not sampled"
            else:
                fill = pass_colour(value[0] / value[1])
                tip = f"{name} · steps {cols[c]}: {value[0]}/{value[1]} passed"
            out.append(
                f"<rect class='cell' x='{x + 1}' y='{y + 1}' width='{cell - 2}' "
                f"height='{cell - 2}' rx='3' fill='{fill}'><title>{escape(tip)}</title></rect>"
            )
    # Column labels: every few, so they do not overlap.
    every = max(1, math.ceil(len(cols) / 12))
    for c, name in enumerate(cols):
        if c % every == 0:
            out.append(
                f"<text x='{label_width + c * cell + cell / 2:.1f}' "
                f"y='{top + len(rows) * cell + 14}' text-anchor='middle' font-size='10' "
                f"fill='{_TEXT}'>{escape(name.split('-')[0])}</text>"
            )
    out.append(
        f"<text x='{label_width}' y='{height - 4}' font-size='11' fill='{_AXIS}'>"
        "step (bucket start) →</text></svg>"
    )
    return "".join(out)
