"""A backend's extra compile facts as named values: :class:`NamedFacts`, the plainest filling of the slot
:attr:`app.core.passes.model.PassPipeline.extras` (a :class:`~app.core.passes.model.BackendCompileFacts`), for a
backend row whose reader module (:attr:`app.core.backends.BackendFacts.dump_parser`) has a few facts to tell and
no autotuning, thunk sequence or fusion configs. Each fact is one line of the ``passes`` report and of its page in
the Passes tab, and all of them one ``backend_facts`` JSON event. Pure data, no Qt."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.passes.model import Autotune, CompileFigures, FusionIR, PassPipeline, Thunk

#: What a fact's value may be: what JSON writes as it is.
FactValue = str | int | float | bool | None


@dataclass
class NamedFacts:
    """``title``: the backend's name in the report and on its page (``"XLA:CPU"``); ``facts``: ``{name: value}``
    in the order they are shown (``{"kernels compiled": 12}``); ``figures``: the capture's
    :class:`~app.core.passes.model.CompileFigures` the compile split reads (a reader's ``apply_capture`` may set
    them); ``autotune`` None and ``thunk_sequence`` empty (a backend with those writes its own class, as XLA:GPU's
    :class:`app.core.passes.gpu_text.GpuCompile`)."""

    title: str
    facts: dict[str, FactValue] = field(default_factory=dict)
    figures: CompileFigures = field(default_factory=CompileFigures)
    autotune: Autotune | None = None
    thunk_sequence: list[Thunk] = field(default_factory=list)

    def fusion_facts(self, fusion: str, fusion_ir: dict[str, FusionIR]) -> tuple[str, bool, bool]:
        """No config, not autotuned; its kernel's IR as the recording has it."""
        return "", False, fusion in fusion_ir

    def report_text(self, pipeline: PassPipeline) -> str:
        """``\\n<title> (<module>):`` then one ``  name  value`` line per fact ("" without facts)."""
        if not self.facts:
            return ""
        width = max(len(name) for name in self.facts)
        return (f"\n{self.title} ({pipeline.module}):\n"
                + "".join(f"  {name:<{width}}  {value}\n" for name, value in self.facts.items()))

    def report_json(self, pipeline: PassPipeline) -> list[dict]:
        """One ``{"event": "backend_facts", "title", "module", "facts"}`` (none without facts)."""
        if not self.facts:
            return []
        return [{"event": "backend_facts", "title": self.title, "module": pipeline.module, "facts": dict(self.facts)}]

    def page_text(self, pipeline: PassPipeline) -> str:
        """The report's lines, without the blank line before them."""
        return self.report_text(pipeline).lstrip("\n")
