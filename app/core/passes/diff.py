"""A diff of two snapshots of a recorded :class:`~app.core.passes.model.PassPipeline` (``difflib``, hunks
with folded context) and the snapshot before one. Pure Python over the recorded texts."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from app.core.passes.model import PassPipeline, Snapshot


@dataclass
class DiffLine:
    """``tag``: ``" "`` unchanged, ``"-"`` only in the older text, ``"+"`` only in the newer; ``old`` / ``new``:
    1-based line numbers in each text (None on the side the line is not in)."""

    tag: str
    old: int | None
    new: int | None
    text: str


@dataclass
class DiffHunk:
    """A changed region with ``context`` unchanged lines around it; ``folded_before``: unchanged lines
    between the previous hunk (or the start) and this one, hidden."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[DiffLine]
    folded_before: int

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_len} +{self.new_start},{self.new_len} @@"


@dataclass
class SnapshotDiff:
    """Diff of ``old`` → ``new`` (snapshot labels): hunks, added/removed line counts, ``folded_after``
    (unchanged lines after the last hunk)."""

    old: str
    new: str
    hunks: list[DiffHunk]
    added: int
    removed: int
    folded_after: int = 0

    def unified(self) -> str:
        """The diff as unified-diff text (``difflib.unified_diff`` layout)."""
        out = [f"--- {self.old}", f"+++ {self.new}"]
        for h in self.hunks:
            out.append(h.header)
            out.extend(f"{ln.tag}{ln.text}" for ln in h.lines)
        return "\n".join(out) + "\n"


def diff_snapshots(old: Snapshot, new: Snapshot, context: int = 3) -> SnapshotDiff:
    """Line diff of two snapshots' HLO texts (``difflib.SequenceMatcher``, grouped with ``context`` lines)."""
    a, b = old.text.splitlines(), new.text.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    hunks: list[DiffHunk] = []
    added = removed = 0
    shown_to = 0  # old lines up to here are shown or folded already
    for group in matcher.get_grouped_opcodes(context):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        lines: list[DiffLine] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [DiffLine(" ", a1 + k + 1, b1 + k + 1, a[a1 + k]) for k in range(a2 - a1)]
                continue
            if tag in ("replace", "delete"):
                lines += [DiffLine("-", k + 1, None, a[k]) for k in range(a1, a2)]
                removed += a2 - a1
            if tag in ("replace", "insert"):
                lines += [DiffLine("+", None, k + 1, b[k]) for k in range(b1, b2)]
                added += b2 - b1
        hunks.append(DiffHunk(i1 + 1, i2 - i1, j1 + 1, j2 - j1, lines, i1 - shown_to))
        shown_to = i2
    return SnapshotDiff(old.label, new.label, hunks, added, removed, len(a) - shown_to if hunks else len(a))


def previous_snapshot(pipeline: PassPipeline, snapshot: Snapshot) -> Snapshot | None:
    """The snapshot before ``snapshot`` in :meth:`PassPipeline.all_snapshots` order (None for the first)."""
    snaps = pipeline.all_snapshots()
    for i, s in enumerate(snaps):
        if s is snapshot:
            return snaps[i - 1] if i > 0 else None
    return None


def diff_rows(diff: SnapshotDiff) -> list[tuple[str, int | None, int | None, str]]:
    """A :class:`SnapshotDiff` as a diff view's rows ``(tag, old line, new line, text)``, folds as ``"~"`` rows
    (the Passes tab's HLO diff and its Compare… dialog)."""
    rows: list[tuple[str, int | None, int | None, str]] = []
    for hunk in diff.hunks:
        if hunk.folded_before:
            rows.append(("~", None, None, f"⋯ {hunk.folded_before:,} unchanged lines"))
        rows += [(ln.tag, ln.old, ln.new, ln.text) for ln in hunk.lines]
    if diff.hunks and diff.folded_after:
        rows.append(("~", None, None, f"⋯ {diff.folded_after:,} unchanged lines"))
    return rows
