"""Profile benchmark: where the time of a steady jit-static decode step goes, end to end.

    .venv/bin/python bench/op_profile.py [--models random:gpt2-small-shape smollm2-135m-instruct] [--steps 20]

Per model: the time :func:`app.core.profile.step.profile_step` takes end to end (compile, warm-up, 20 traced
decode steps, reading the capture; target < 5 s on the GPT-2 shape), the step's wall time, the share of it
covered by XLA ops, the host share (no op running), the top source lines with achieved GB/s, and the
roofline: the step's estimated bytes at the measured read bandwidth against the measured step time. A model
that does not load here is skipped with a note.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__))
# Run as a script, this file's folder comes first on sys.path and this file would shadow the standard
# library's ``profile`` module (``cProfile`` imports it; torch._dynamo imports cProfile): drop the folder.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))
from bench.scratch import use_own_dirs  # noqa: E402

use_own_dirs()  # never the user's settings or caches
warnings.filterwarnings("ignore")


def profile_model(name: str, steps: int, top: int, fold: bool) -> dict | None:
    from app.core.engine.engine import load_engine
    from app.core.errors import PlaygroundError
    from app.core.profile.step import aggregate, profile_step

    t0 = time.perf_counter()
    try:
        engine = load_engine(name)
    except (PlaygroundError, ImportError, AttributeError, OSError) as exc:  # not installed / not loadable here
        print(f"\n{name}: skipped ({type(exc).__name__}: {exc})")
        return None
    load_s = time.perf_counter() - t0
    phases: list[tuple[str, float]] = []
    t0 = time.perf_counter()
    profile = profile_step(engine, "The jit function traces a Python function", n_steps=steps,
                           on_progress=lambda msg: phases.append((msg, time.perf_counter())))
    total_s = time.perf_counter() - t0
    ends = [t for _, t in phases[1:]] + [t0 + total_s]
    phase_s = [(msg.split(":")[0], end - start) for (msg, start), end in zip(phases, ends)]
    lines = aggregate(profile, by="line")[:top]
    modules = aggregate(profile, by="module", fold_layers=fold)[:top]
    return {"model": engine.label, "params": engine.loaded.n_params, "weight_bytes": engine.loaded.param_bytes,
            "load_s": load_s, "profile_s": total_s, "phase_s": phase_s, "profile": profile, "lines": lines, "modules": modules}


def report(res: dict) -> None:
    p = res["profile"]
    print(f"\n{res['model']}: {res['params'] / 1e6:.1f} M params, {res['weight_bytes'] / 1e6:.0f} MB weights; "
          f"loaded in {res['load_s']:.1f} s")
    print(f"profile_step ({p.n_steps} decode steps) end to end: {res['profile_s']:.2f} s ("
          + ", ".join(f"{name} {sec:.2f} s" for name, sec in res["phase_s"]) + ")")
    untraced = f"; untraced {p.untraced_ms:.2f} ms" if p.untraced_ms else ""
    print(f"step wall {p.step_ms:.2f} ms (median {p.step_ms_median:.2f}{untraced}); ops cover {p.attributed_share:.1%} "
          f"({p.op_ms:.2f} ms); no op running {p.idle_share:.1%}: host {p.host_share:.1%}, between ops "
          f"{p.between_ops_share:.1%}")
    bound = p.bound_ms or 0.0
    print(f"read bandwidth {p.bandwidth_gbs:.1f} GB/s; est. bytes/step {p.bytes_per_step / 1e6:.1f} MB -> bound "
          f"{bound:.2f} ms; step / bound {p.step_ms / bound:.2f}x, ops / bound {p.op_ms / bound:.2f}x"
          if bound else "no bandwidth figure")
    for title, rows in (("source line", res["lines"]), ("module", res["modules"])):
        print(f"{'µs/step':>9} {'share':>6} {'GB/s':>6} {'% BW':>5} {'calls':>5}  top {title}s")
        for r in rows:
            bw = f"{r.bandwidth_share * 100:5.0f}" if r.bandwidth_share is not None else "    –"
            print(f"{r.us_per_step:9.1f} {r.share:6.1%} {r.gbs or 0:6.1f} {bw} {r.calls_per_step:5.0f}  {r.key}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["random:gpt2-small-shape", "smollm2-135m-instruct"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--fold-layers", action="store_true", default=True)
    args = parser.parse_args()
    import transformers

    transformers.logging.set_verbosity_error()
    for name in args.models:
        res = profile_model(name, args.steps, args.top, args.fold_layers)
        if res is not None:
            report(res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
