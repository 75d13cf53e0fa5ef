"""Child process of a recording with the fusion log: ``python _child.py MODULE.mlir OUT_DIR``.

Run by path (it imports nothing of the app), with ``TF_CPP_MIN_LOG_LEVEL=0
TF_CPP_VMODULE=cpu_instruction_fusion=2,instruction_fusion=2`` set by the parent so XLA's fusion log goes
to stderr. It parses the StableHLO text (``Lowered.as_text(debug_info=True)``: source locations kept, so
the HLO metadata is the same) in JAX's MLIR context and compiles it with the backend client
(``jax._src.compiler.backend_compile_and_load`` with ``get_compile_options(num_replicas=1,
num_partitions=1, env_options_overrides=…)`` — private JAX API of 0.10.2; a ``Lowered`` cannot be pickled
and ``jax.export`` wraps the module in a new one). Differences from the parent's own ``lowered.compile()``,
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


def main(module_path: str, out_dir: str) -> int:
    import jax
    from jax._src import compiler
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc

    with open(module_path, encoding="utf-8") as f:
        text = f.read()
    dump = os.path.join(out_dir, "dump")
    extra_path = os.path.join(out_dir, "options.json")
    extra = {}
    if os.path.exists(extra_path):
        with open(extra_path, encoding="utf-8") as f:
            extra = json.load(f)
    options = {**extra, "xla_dump_to": dump, "xla_dump_hlo_pass_re": ".*", "xla_dump_hlo_as_text": True}
    backend = jax.devices("cpu")[0].client
    devices = xc.DeviceList(tuple(jax.devices("cpu")[:1]))
    with mlir.make_ir_context():
        module = mlir.ir.Module.parse(text)
        compile_options = compiler.get_compile_options(
            num_replicas=1, num_partitions=1, env_options_overrides=options, backend=backend)
        jax.profiler.start_trace(os.path.join(out_dir, "profile"))
        try:
            t0 = time.perf_counter()
            executable = compiler.backend_compile_and_load(backend, module, devices, compile_options, [])
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
