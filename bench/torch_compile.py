"""torch-compile against torch and jit-static in one process: first-call ms (prefill, decode) with the
compile phases PyTorch reports, and steady decode ms/token with ratios to torch.

    .venv/bin/python bench/torch_compile.py [--model random:gpt2-small-shape] [--tokens 48]
        [--inductor-cache cold|warm] [--threads N] [--json]

``--inductor-cache cold`` (default) points Inductor at a fresh temporary directory, so the FX graph and
AOT autograd caches miss and every C++ kernel is built; ``warm`` uses the app's default directory
(:func:`app.core.inductor_cache.default_inductor_cache_dir`), so a second invocation measures a
disk-cache hit. Compare modes within one run, as ratios: this machine's speed moves between days
(CONTEXT.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
warnings.filterwarnings("ignore")

PROMPT = "The jit function traces a Python function into a jaxpr"
MODES = ("torch", "torch-compile", "jit-static")


def register_mode() -> None:
    """Make ``torch-compile`` selectable if the app does not list it yet."""
    from app.core import modes, settings
    from app.core.torch_compile import TorchCompileMode

    modes.MODE_CLASSES.setdefault("torch-compile", TorchCompileMode)
    if "torch-compile" not in settings.MODES:
        settings.MODES = settings.MODES + ("torch-compile",)


def bench_mode(engine, mode: str, n_tokens: int) -> dict:
    """One cold run of ``mode`` (compiled state dropped first): first calls and steady decode."""
    from app.core.events import CallRecord, FinishedEvent
    from app.core.settings import GenerationSettings
    from app.core.torch_compile import clear_torch_compile

    engine.clear_compiled()
    clear_torch_compile(engine)
    settings = GenerationSettings(mode=mode, max_new_tokens=n_tokens, capture_ir=False, stop_at_eos=False)
    records, finished = [], None
    for event in engine.generate(PROMPT, settings):
        if isinstance(event, CallRecord):
            records.append(event)
        elif isinstance(event, FinishedEvent):
            finished = event
    prefill, decode = records[0], [r for r in records if r.step == "decode"]
    steady = [r.wall_ms for r in decode if not r.compiled]
    return {
        "mode": mode,
        "first_prefill_ms": prefill.wall_ms,
        "first_decode_ms": decode[0].wall_ms if decode else None,
        "prefill_phases": prefill.compile_phases,
        "decode_phases": decode[0].compile_phases if decode else {},
        "cache_hit": [r.persistent_cache_hit for r in records if r.compiled],
        "steady_ms_per_token": statistics.median(steady) if steady else None,
        "compiles": finished.summary.n_compiles,
        "token_ids": finished.token_ids,
    }


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_table(rows: list[dict], label: str) -> None:
    torch_ms = next(r["steady_ms_per_token"] for r in rows if r["mode"] == "torch")
    print(f"\n{label}")
    print(f"{'mode':<14}{'1st prefill ms':>15}{'1st decode ms':>15}{'steady ms/tok':>15}{'vs torch':>10}{'compiles':>10}")
    for r in rows:
        ratio = torch_ms / r["steady_ms_per_token"] if r["steady_ms_per_token"] else None
        print(f"{r['mode']:<14}{_fmt(r['first_prefill_ms']):>15}{_fmt(r['first_decode_ms']):>15}"
              f"{_fmt(r['steady_ms_per_token'], 2):>15}{_fmt(ratio, 2) + 'x':>10}{r['compiles']:>10}")
    for r in rows:
        for kind in ("prefill", "decode"):
            phases = r[f"{kind}_phases"]
            if phases:
                split = ", ".join(f"{name} {ms:.0f}" for name, ms in phases.items())
                print(f"  {r['mode']} {kind} compile phases (ms): {split}")
    by_mode = {r["mode"]: r["token_ids"] for r in rows}
    if "torch-compile" in by_mode:
        same = by_mode["torch-compile"] == by_mode.get("torch")
        print(f"  greedy tokens torch-compile == torch: {same}; disk-cache hits: "
              f"{next(r['cache_hit'] for r in rows if r['mode'] == 'torch-compile')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="random:gpt2-small-shape")
    parser.add_argument("--modes", nargs="+", default=list(MODES))
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--inductor-cache", choices=("cold", "warm"), default="cold")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: unchanged)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import torch

    from app.core.engine import load_engine
    from app.core.inductor_cache import default_inductor_cache_dir, set_inductor_cache

    if args.threads:
        torch.set_num_threads(args.threads)
    cold = args.inductor_cache == "cold"
    set_inductor_cache(tempfile.mkdtemp(prefix="bench-inductor-") if cold else default_inductor_cache_dir())
    register_mode()
    engine = load_engine(args.model)
    rows = [bench_mode(engine, mode, args.tokens) for mode in args.modes]
    label = (f"{engine.label}, {args.tokens} tokens, torch threads {torch.get_num_threads()}, "
             f"Inductor cache {args.inductor_cache}")
    if args.json:
        print(json.dumps({"label": label, "rows": rows}, indent=1))
    else:
        print_table(rows, label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
