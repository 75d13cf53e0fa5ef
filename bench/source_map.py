"""Source-map and dataflow-graph timings on the 12-layer, 768-wide GPT-2-shaped random model.

Run: ``python bench/source_map.py [--model random:gpt2-small-shape] [--step decode]``. Prints the time to
build the source map of one compiled step (target < 2 s), to fold its layers, to export CSV/JSON, and to
build and lay out the dataflow graph of one layer (~200 nodes, target < 1 s) and of the whole step with
layers collapsed. Times are wall-clock medians of ``--repeat`` runs on this machine (2 CPU cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.scratch import use_own_dirs  # noqa: E402

use_own_dirs()  # never the user's settings or caches
warnings.filterwarnings("ignore")


def _median_s(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="random:gpt2-small-shape")
    ap.add_argument("--step", choices=("prefill", "decode"), default="decode")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from app.core.engine.engine import load_engine
    from app.core.inspect import source_map_io
    from app.core.inspect.dataflow import build_dataflow, layer_instance, layout
    from app.core.inspect.source_map import build_source_map
    from app.core.settings import GenerationSettings

    engine = load_engine(args.model)
    engine.clear_compiled()
    for _ in engine.generate("The jit function", GenerationSettings(max_new_tokens=2)):
        pass
    ir = engine.ir[("jit-static", args.step)]
    model = engine.loaded.model
    print(f"model {engine.label}, {args.step} step: {ir.n_equations:,} equations (with sub-jaxprs), "
          f"jaxpr {len(ir.jaxpr or ''):,} chars, StableHLO {len(ir.stablehlo or ''):,}, HLO {len(ir.hlo or ''):,}")
    build_s, sm = _median_s(lambda: build_source_map(ir, args.step, model), args.repeat)
    linked = sum(bool(g.hlo_lines) for g in sm.groups)
    print(f"build source map:        {build_s * 1000:8.1f} ms  ({len(sm.equations):,} top-level equations, "
          f"{len(sm.groups):,} groups, {linked:,} linked to HLO)   target < 2000 ms")
    fold_s, folded = _median_s(sm.fold_layers, args.repeat)
    print(f"fold layers:             {fold_s * 1000:8.1f} ms  ({len(folded.groups):,} folded groups)")
    csv_s, _ = _median_s(lambda: source_map_io.to_csv(sm), args.repeat)
    json_s, text = _median_s(lambda: source_map_io.to_json(sm), args.repeat)
    print(f"export CSV / JSON:        {csv_s * 1000:8.1f} / {json_s * 1000:.1f} ms  (JSON {len(text):,} chars)")
    first = next(layer_instance(e.module) for e in sm.equations if layer_instance(e.module))
    sel = [e.index for e in sm.equations if layer_instance(e.module) == first]
    graph_s, df = _median_s(lambda: layout(build_dataflow(sm, sel)), args.repeat)
    print(f"graph of {first}:  {graph_s * 1000:8.1f} ms  ({len(df.nodes)} nodes, {len(df.edges)} edges)"
          "   target < 1000 ms")
    whole_s, dfw = _median_s(lambda: layout(build_dataflow(sm)), args.repeat)
    print(f"graph of the whole step: {whole_s * 1000:8.1f} ms  ({len(dfw.nodes)} nodes, {len(dfw.edges)} edges,"
          " layers collapsed)")
    xla = (ir.cost or {}).get("flops")
    if xla:
        print(f"estimated flops {sm.total_flops():,.0f} vs XLA cost_analysis {xla:,.0f} "
              f"({sm.total_flops() / xla:.2f}x)")


if __name__ == "__main__":
    main()
