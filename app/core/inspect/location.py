"""Where an equation, op or instruction came from: one :class:`SourceLocation` and its one label.

Every record that has a source (jaxpr equations and their groups in the source map, StableHLO ops and HLO
instructions parsed from their metadata, profile rows, prefill/decode diff rows) names its fields
``file``, ``line``, ``function``, ``scope`` and gives them as a :class:`SourceLocation` through its
``location`` property, whose :attr:`SourceLocation.label` is the ``file:line`` text every view and table
shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.units import elide_start, source_label


@dataclass(frozen=True)
class SourceLocation:
    """``file`` (absolute or as JAX reports it; ``""`` when unknown), 1-based ``line`` (0 when unknown),
    ``function`` (the frame's function), ``scope`` (the name stack, e.g. ``aten::mm`` under torchax)."""

    file: str = ""
    line: int = 0
    function: str = ""
    scope: str = ""

    def __bool__(self) -> bool:
        return bool(self.file)

    @property
    def label(self) -> str:
        """``transformers/models/llama/modeling_llama.py:243`` (the path after ``site-packages/``), or ``""``
        when the file is unknown."""
        return source_label(self.file, self.line)

    def elided(self, max_chars: int) -> str:
        """:attr:`label` cut at its start so that it fits ``max_chars`` and keeps the line number:
        ``…/llama/modeling_llama.py:243``."""
        return elide_start(self.label, max_chars)
