"""Test data of session files shared by the core and window tests: a recorded pass pipeline."""

from __future__ import annotations

import zlib

from app.core.passes.model import PassPipeline, Snapshot
from app.core.session.requests import PassesReady, PassesRequest

#: The start of a child process's script that fails any import of JAX, torch, torchax or transformers: for the tests
#: that a command reading session files (show-session, compare, tradeoff) needs none of them.
BLOCK_HEAVY_IMPORTS = """import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jax", "jaxlib", "torch", "torchax", "transformers"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
"""

BEFORE = "HloModule jit_step\n\nENTRY %main {\n  %p = f32[4] parameter(0)\n  %a = f32[4] add(%p, %p)\n" \
         "  ROOT %m = f32[4] multiply(%a, %a)\n}\n"
FINAL = "HloModule jit_step\n\nENTRY %main {\n  %p = f32[4] parameter(0)\n" \
        "  ROOT %fusion = f32[4] fusion(%p), kind=kLoop\n}\n" * 40


def snapshot(index: int, pass_name: str, text: str) -> Snapshot:
    return Snapshot(index, "cpu pipeline", pass_name, "", f"{index}.txt", text.count(" = "), {}, [], len(text),
                    zlib.compress(text.encode()))


def passes_ready(mode: str = "jit-static") -> PassesReady:
    before, final = snapshot(-1, "before optimizations", BEFORE), snapshot(1, "after optimizations", FINAL)
    pipeline = PassPipeline("jit_step", [snapshot(0, "fusion", FINAL)], before, final, [], [], [], 12.5, None)
    rows = [{"pipeline": "cpu pipeline", "pass": "fusion", "index": 0, "changed": 1, "ms": 1.5, "runs": 1},
            {"pipeline": "cpu pipeline", "pass": "dce", "index": None, "changed": 0, "ms": 0.2, "runs": 2}]
    snaps = [s.summary() | {"label": s.label} for s in pipeline.all_snapshots()]
    breakdown = {"total_ms": 12.5, "parts": [{"label": "HLO passes", "ms": 10.0, "group": "passes", "source": ""}],
                 "by_group": {"passes": 10.0}, "fusion_compile_ms": 0.0, "n_fusion_compiles": 0}
    return PassesReady(PassesRequest("decode", False, mode), "decode", mode, pipeline, rows, snaps, breakdown,
                       [{"name": "fusion", "kind": "kLoop", "absorbed": [("a", "add", "m.py:3")]}], [], 2.5)
