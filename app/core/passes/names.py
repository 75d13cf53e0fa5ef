"""How dump files and the profiler spell one pipeline or pass: file names write a pipeline's spaces as
underscores; the profiler's events keep the spaces (``"HLO passes after layout assignment (jit_mlp)"``) and some
pipelines have real underscores (``post_scatter_expansion_simplification``), so names are matched with spaces
and underscores equated (:func:`norm`)."""

from __future__ import annotations

from app.core.passes.model import PipelineTime, Snapshot


def norm(name: str) -> str:
    """A pipeline or pass name with spaces and underscores equated (file names vs profiler names)."""
    return name.replace(" ", "_")


def rename_pipelines(snapshots: list[Snapshot], pipelines: list[PipelineTime]) -> None:
    """Give snapshots the profiler's spelling of their pipeline (``post_scatter_expansion_simplification``
    keeps its underscores; ``HLO passes after layout assignment`` its spaces)."""
    names = {norm(p.pipeline): p.pipeline for p in pipelines}
    for s in snapshots:
        s.pipeline = names.get(norm(s.pipeline), s.pipeline)
