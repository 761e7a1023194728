"""Matplotlib figures of the report, written as PNG files beside ``index.html``.

matplotlib's Agg backend renders static images with no display and no JavaScript, so
the report opens offline in any browser; PNG output carries no timestamp, so the same
numbers give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DPI = 100
plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "figure.dpi": DPI, "svg.hashsalt": "perspecta"})


def save(fig: plt.Figure, path: Path) -> None:
    """Write ``fig`` as a deterministic PNG (no software/date metadata) and close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def _short(label: str, width: int = 28) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def heatmap(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], title: str, path: Path, *,
            vmin: float, vmax: float, cmap: str = "RdYlGn", fmt: str = "{:.2f}") -> None:
    """Rows × columns of numbers with each cell printed; NaN cells are grey (no data)."""
    h = max(2.5, 0.28 * len(rows) + 1.5)
    w = max(4.0, 0.9 * len(cols) + 3.0)
    fig, ax = plt.subplots(figsize=(w, h))
    masked = np.ma.masked_invalid(values)
    cm = plt.get_cmap(cmap).with_extremes(bad="#dddddd")
    im = ax.imshow(masked, aspect="auto", cmap=cm, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(cols)), [_short(c, 22) for c in cols], rotation=35, ha="right")
    ax.set_yticks(range(len(rows)), [_short(r, 40) for r in rows])
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if not math.isnan(values[i, j]):
                ax.text(j, i, fmt.format(values[i, j]), ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, fraction=0.04)
    ax.set_title(title)
    save(fig, path)


def grouped_bars(groups: Sequence[str], series: dict[str, Sequence[float]], title: str, ylabel: str, path: Path, *,
                 errors: dict[str, Sequence[float]] | None = None, chance: Sequence[float] | None = None,
                 ylim: tuple[float, float] | None = (0, 100)) -> None:
    """One bar per series in each group, optional error bars and a chance marker per group."""
    n = max(1, len(series))
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(min(14.0, max(5.0, 0.35 * len(groups) * n + 2)), 3.6))
    x = np.arange(len(groups))
    for k, (name, vals) in enumerate(series.items()):
        err = errors.get(name) if errors else None
        ax.bar(x + (k - (n - 1) / 2) * width, vals, width, label=_short(name, 36), yerr=err, capsize=2)
    if chance is not None:
        ax.scatter(x, chance, marker="_", s=400, color="black", zorder=3, label="chance")
    ax.set_xticks(x, [_short(g, 26) for g in groups], rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    save(fig, path)


def hbars(labels: Sequence[str], values: Sequence[float], title: str, xlabel: str, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(5.0, max(1.8, 0.3 * len(labels) + 1)))
    y = np.arange(len(labels))
    ax.barh(y, values, color=plt.get_cmap("viridis")(np.clip(np.asarray(values) / 100.0, 0, 1)))
    ax.set_yticks(y, [_short(v, 36) for v in labels])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    save(fig, path)


def scatter(xs: Sequence[float], ys: Sequence[float], labels: Sequence[str], title: str, xlabel: str, ylabel: str,
            path: Path, *, fit: bool = True) -> None:
    """Labelled points with a least-squares line (when there are 2+ distinct x values)."""
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    ax.scatter(xs, ys, color="tab:blue", zorder=3)
    for x, y, lab in zip(xs, ys, labels):
        ax.annotate(_short(lab, 24), (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    if fit and len(set(xs)) > 1:
        a, b = np.polyfit(xs, ys, 1)
        grid = np.linspace(min(xs), max(xs), 20)
        ax.plot(grid, a * grid + b, color="tab:red", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    save(fig, path)


def stacked_bars(labels: Sequence[str], parts: Sequence[str], shares: np.ndarray, colors: Sequence, title: str,
                 path: Path) -> None:
    """One horizontal bar per label split into ``parts`` (rows of ``shares`` sum to 100)."""
    fig, ax = plt.subplots(figsize=(8.0, max(2.0, 0.35 * len(labels) + 1.6)))
    left = np.zeros(len(labels))
    for j, part in enumerate(parts):
        ax.barh(range(len(labels)), shares[:, j], left=left, color=colors[j], label=part, edgecolor="white",
                linewidth=0.3)
        left += shares[:, j]
    ax.set_yticks(range(len(labels)), [_short(v, 36) for v in labels])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of 4-variant groups")
    ax.set_title(title)
    ax.legend(ncol=8, fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    save(fig, path)


def lines(series: dict[str, tuple[Sequence[float], Sequence[float]]], title: str, xlabel: str, ylabel: str,
          path: Path, *, logx: bool = False, reference: tuple[Sequence[float], Sequence[float], str] | None = None,
          ax_grid: int = 1, panels: dict[str, dict[str, tuple[Sequence[float], Sequence[float]]]] | None = None) -> None:
    """Lines of (x, y) points per series; with ``panels``, one small subplot per panel."""
    groups = panels or {title: series}
    ncols = min(3, len(groups))
    nrows = math.ceil(len(groups) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    for ax, (ptitle, ser) in zip(axes.flat, groups.items()):
        for name, (xs, ys) in ser.items():
            ax.plot(xs, ys, marker="o", label=_short(name, 30))
        if reference:
            ax.plot(reference[0], reference[1], linestyle="--", color="grey", label=reference[2])
        if logx:
            ax.set_xscale("log")
        ax.set_title(ptitle)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    fig.tight_layout()
    save(fig, path)


def radar(axes_labels: Sequence[str], series: dict[str, Sequence[float]], title: str, path: Path) -> None:
    """Polar chart, one closed polygon per series over the same axes (scores 0..100)."""
    k = len(axes_labels)
    angles = np.linspace(0, 2 * np.pi, k, endpoint=False).tolist()
    fig, ax = plt.subplots(figsize=(5.5, 5.5), subplot_kw={"polar": True})
    for name, vals in series.items():
        v = list(vals)
        ax.plot(angles + angles[:1], v + v[:1], label=_short(name, 30))
        ax.fill(angles + angles[:1], v + v[:1], alpha=0.12)
    ax.set_xticks(angles, [_short(a, 18) for a in axes_labels], fontsize=7)
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper right", bbox_to_anchor=(1.35, 1.1))
    save(fig, path)


def psychometric(series: dict[str, dict], title: str, xlabel: str, path: Path, *, target: float = 0.75) -> None:
    """Accuracy (%) per knob value with 95% intervals and a fitted curve per series.

    ``series[name]`` holds ``xs``, ``acc``, ``lo``, ``hi`` (shares), ``curve`` = (grid, shares)
    or None, ``chance``, ``threshold`` (a knob value or None) and ``flat`` (the fit found no
    slope: its curve is dashed). Series are nudged apart
    along x by a small fraction of the range so their error bars stay readable.
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    xs_all = [x for s in series.values() for x in s["xs"]]
    span = (max(xs_all) - min(xs_all)) or 1.0
    n = len(series)
    for k, (name, s) in enumerate(series.items()):
        dx = (k - (n - 1) / 2) * 0.012 * span
        xs = np.asarray(s["xs"], dtype=float) + dx
        acc = 100 * np.asarray(s["acc"])
        # clipped at 0: at 0% or 100% the interval's end equals the point up to rounding
        err = np.clip([acc - 100 * np.asarray(s["lo"]), 100 * np.asarray(s["hi"]) - acc], 0.0, None)
        line = ax.errorbar(xs, acc, yerr=err, fmt="o", ms=4, capsize=2, label=_short(name, 36))
        color = line[0].get_color()
        if s.get("curve") is not None:
            grid, shares = s["curve"]
            ax.plot(grid, 100 * np.asarray(shares), color=color, linewidth=1.3,
                    linestyle="--" if s.get("flat") else "-")
        if s.get("threshold") is not None:
            ax.axvline(s["threshold"], color=color, linestyle=":", linewidth=1)
    chances = sorted({round(s["chance"], 4) for s in series.values() if s["chance"] > 0})
    for c in chances:
        ax.axhline(100 * c, color="grey", linestyle="--", linewidth=0.8)
    ax.axhline(100 * target, color="black", linestyle=":", linewidth=0.8)
    ax.text(1.0, 100 * target, f" {100 * target:.0f}%", transform=ax.get_yaxis_transform(), va="center", fontsize=7)
    for c in chances:
        ax.text(1.0, 100 * c, " chance", transform=ax.get_yaxis_transform(), va="center", fontsize=7, color="grey")
    ax.set_ylim(-2, 102)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("accuracy % (95% Wilson)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.08, 1.0))
    save(fig, path)
