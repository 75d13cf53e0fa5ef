"""Child process of a recording with the fusion log or with kernel IR: ``python -m app.core.passes._child
MODULE.mlir OUT_DIR`` (:func:`app.core.passes.record._compile_in_child_process`).

For the fusion log the parent sets ``TF_CPP_MIN_LOG_LEVEL=0
TF_CPP_VMODULE=cpu_instruction_fusion=2,instruction_fusion=2`` so XLA's fusion log goes to stderr. A compile that
dumps the kernels' IR (``xla_dump_emitter_re`` in options.json) runs here because jax 0.12.0.1's XLA:CPU may
abort the process doing it (``tools/repro_kernel_ir_abort.py``): the parent sees the exit status and records
again without it. It parses the StableHLO text (``Lowered.as_text(debug_info=True)``: source locations kept, so
the HLO metadata is the same) in JAX's MLIR context and compiles it with the backend client
(:func:`app.core.jax_private.compile_stablehlo_text`: private JAX API; a ``Lowered`` cannot be pickled
and ``jax.export`` wraps the module in a new one). It imports only that module of the app, before JAX. Differences from the parent's own ``lowered.compile()``,
measured on a small MLP: the ``HloModule`` header lacks ``allow_spmd_sharding_propagation_*`` and JSON keys of
``backend_config`` may be ordered differently; instruction names and fusions are the same.

Reads OUT_DIR/options.json when present: further compiler options (the ``--xla-flags`` of a recording).
Writes into OUT_DIR: ``dump/`` (the per-pass dumps), ``profile/`` (the XSpace), ``final.txt`` (the
executable's optimized HLO) and ``result.json`` (``{"compile_ms": …}``, wall ms of the compile call).
"""

import json
import os
import sys
import time

from app.core.backends import CPU
from app.core.jax_private import compile_stablehlo_text


def main(module_path: str, out_dir: str) -> int:
    import jax

    with open(module_path, encoding="utf-8") as f:
        text = f.read()
    dump = os.path.join(out_dir, "dump")
    extra_path = os.path.join(out_dir, "options.json")
    extra = {}
    if os.path.exists(extra_path):
        with open(extra_path, encoding="utf-8") as f:
            extra = json.load(f)
    options = {**extra, "xla_dump_to": dump, **dict(CPU.dump_options)}
    jax.profiler.start_trace(os.path.join(out_dir, "profile"))
    try:
        t0 = time.perf_counter()
        executable = compile_stablehlo_text(text, options, platform=CPU.platform)
        compile_ms = (time.perf_counter() - t0) * 1000
    finally:
        jax.profiler.stop_trace()
    with open(os.path.join(out_dir, "final.txt"), "w", encoding="utf-8") as f:
        f.write(executable.hlo_modules()[0].to_string())
    with open(os.path.join(out_dir, "result.json"), "w", encoding="utf-8") as f:
        json.dump({"compile_ms": compile_ms}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
