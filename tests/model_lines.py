"""Source lines of transformers' installed Llama, found by their code (line numbers move between releases: 5.23's
``o_proj`` call was line 269 of modeling_llama.py, 5.25's is 270). Imported lazily by the profile tests."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def llama_line(code: str) -> str:
    """``modeling_llama.py:N`` of the one line of the installed ``modeling_llama.py`` holding ``code``; raises
    ``ValueError`` when none or several do."""
    import transformers.models.llama.modeling_llama as modeling

    source = Path(modeling.__file__).read_text().splitlines()
    numbers = [i for i, line in enumerate(source, 1) if code in line]
    if len(numbers) != 1:
        raise ValueError(f"{len(numbers)} lines of modeling_llama.py hold {code!r}")
    return f"modeling_llama.py:{numbers[0]}"


def mlp_line() -> str:
    """The MLP's one line: ``down_proj(act_fn(gate_proj(x)) * up_proj(x))``."""
    return llama_line("down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))")


def projection_lines() -> tuple[str, ...]:
    """The attention's q, k, v and o projections' lines."""
    return tuple(llama_line(f"= self.{p}(") for p in ("q_proj", "k_proj", "v_proj", "o_proj"))
