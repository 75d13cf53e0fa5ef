"""Rows of the source explorer's tree (:mod:`widgets.source.source_explorer`): its columns, item roles, numeric
sorting (the sort rule of :mod:`widgets.common.tables`), and the fill and aggregation of counts, estimated FLOPs
and measured figures. Plain data in."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from app.core import units
from widgets.common.tables import SortTreeItem

COLUMNS = ("Name", "Equations", "FLOPs", "Output shapes", "µs / step", "% of step", "GB/s")
#: Logical indexes of the measured columns (shown right after Name while a profile applies).
US_COL, SHARE_COL, GBS_COL = 4, 5, 6
MEASURED_TIPS = {
    US_COL: "Summed duration of the node's XLA ops per step, measured by the profiler (µs)",
    SHARE_COL: "Share of the step's wall time charged to the node (an instant with k ops running is split 1/k)",
    GBS_COL: "Achieved GB/s: estimated bytes accessed per step / measured op time",
}
NUMERIC_COLS = (1, 2, US_COL, SHARE_COL, GBS_COL)
ROLE_KIND, ROLE_GROUPS, ROLE_EQNS = Qt.ItemDataRole.UserRole, Qt.ItemDataRole.UserRole + 1, Qt.ItemDataRole.UserRole + 2
ROLE_MEASURED = Qt.ItemDataRole.UserRole + 3  # column 0: [busy µs, wall µs, bytes, share] per step


def to_ranges(lines: list[int]) -> list[tuple[int, int]]:
    """Sorted line numbers → inclusive ``(first, last)`` runs: ``[1,2,3,7]`` → ``[(1,3),(7,7)]``."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(lines)):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


class SortItem(SortTreeItem):
    """A row of the tree: sorts the numeric columns by value (a missing measure below every number), not text."""

    numeric_columns = NUMERIC_COLS


def new_item(parent: QTreeWidgetItem, text: str, kind: str) -> QTreeWidgetItem:
    item = SortItem(parent, [text])
    item.setData(0, ROLE_KIND, kind)
    item.setToolTip(0, text)
    return item


def module_item(tree: QTreeWidget, path: str, modules: dict[str, QTreeWidgetItem]) -> QTreeWidgetItem:
    """The row of module ``path`` (``"model.layers.0.mlp"``), created with its parents when missing."""
    if path in modules:
        return modules[path]
    parent_path, _, name = path.rpartition(".")
    parent = module_item(tree, parent_path, modules) if parent_path else tree.invisibleRootItem()
    item = new_item(parent, name or "(top level)", "module")
    item.setToolTip(0, path or "(top level: outside any module)")
    modules[path] = item
    return item


def rest_item(root: QTreeWidgetItem, rest: Any) -> None:
    """A top-level row for measured time on no line of the map (copies of inputs, no source)."""
    item = new_item(root, "(time on no source line)", "rest")
    item.setToolTip(0, "Ops whose time the profiler could not put on a line of this map: copies of the "
                       "inputs (KV cache), instructions without source metadata")
    item.setData(0, ROLE_GROUPS, [])
    item.setData(0, ROLE_MEASURED, [rest.busy_us, rest.wall_us, rest.bytes, rest.share])
    fill_counts(item, 0, 0.0, [])
    item.setText(1, "")
    item.setText(2, "")
    for col in range(len(COLUMNS)):
        item.setForeground(col, Qt.GlobalColor.gray)


def fill_measured(item: QTreeWidgetItem, m: list[float] | None) -> None:
    """µs per step, % of step and achieved GB/s (bytes / busy µs) from ``[busy µs, wall µs, bytes, share]``."""
    if m is None:
        for col in MEASURED_TIPS:
            item.setText(col, "")
            item.setData(col, Qt.ItemDataRole.UserRole, None)
        return
    busy, _wall, nbytes, share = m
    gbs = nbytes / busy / 1e3 if busy > 0 else None
    for col, value, text in ((US_COL, busy, f"{busy:,.1f}"), (SHARE_COL, share, f"{share * 100:.1f}"),
                             (GBS_COL, gbs, units.fmt(gbs, ",.1f"))):
        item.setText(col, text if busy > 0 else "")
        item.setData(col, Qt.ItemDataRole.UserRole, value if busy > 0 else None)
        item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def fill_counts(item: QTreeWidgetItem, n: int, flops: float, shapes: list[str]) -> None:
    item.setText(1, str(n))
    item.setData(1, Qt.ItemDataRole.UserRole, n)
    item.setText(2, units.flops(flops))
    item.setData(2, Qt.ItemDataRole.UserRole, flops)
    item.setText(3, " ".join(shapes[:4]) + (" …" if len(shapes) > 4 else ""))
    item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def aggregate(item: QTreeWidgetItem, top: bool = False) -> tuple[int, float, list[int], list[float] | None]:
    """Fill module and line rows with the sums of their children (measured figures too); returns
    (eqns, flops, groups, measured or None). ``top``: ``item`` is the invisible root (not filled)."""
    kind = item.data(0, ROLE_KIND)
    if kind in ("group", "eqn", "rest"):
        measured = item.data(0, ROLE_MEASURED) if kind != "eqn" else None
        fill_measured(item, measured)
        return (item.data(1, Qt.ItemDataRole.UserRole), item.data(2, Qt.ItemDataRole.UserRole), list(item.data(0, ROLE_GROUPS)), measured)
    n, flops, groups, measured = 0, 0.0, [], None
    for i in range(item.childCount()):
        child = item.child(i)
        assert child is not None, "i < childCount()"
        cn, cf, cg, cm = aggregate(child)
        n, flops, groups = n + cn, flops + cf, groups + cg
        if cm is not None:
            measured = [a + b for a, b in zip(measured or [0.0] * 4, cm)]
    if not top:
        fill_counts(item, n, flops, [])
        item.setData(0, ROLE_GROUPS, groups)
        item.setData(0, ROLE_MEASURED, measured)
        fill_measured(item, measured)
    return n, flops, groups, measured
