"""``bench/decode.py``'s report: the cold table, the paired rounds' ratios with their intervals, and the targets
(issue 54's, restated on intervals, and the cold compile goals of issues 13 and 31), printed PASS/MISS."""

from __future__ import annotations

#: Targets on the rounds' pairs (issue 54): ``name → (target text, met(pair))``; a pair's ratio is a speed-up
#: (``against``'s ms over ``mode``'s), for the products lane the step's time over its products' time.
TARGETS = {
    "jit-loop ÷ jit-static": ("interval's low end > 1.0", lambda p: p["ci_low"] is not None and p["ci_low"] > 1.0),
    "jit-static ÷ torch eager": (">= 2.0, interval's low end >= 1.8",
                                 lambda p: p["ratio"] >= 2.0 and p["ci_low"] is not None and p["ci_low"] >= 1.8),
    "jit-loop step ÷ its products alone": ("<= 1.15", lambda p: p["ratio"] <= 1.15),
}


def targets(steady: dict | None) -> list[tuple[str, float, str, bool]]:
    """``(pair, ratio, target, met)`` for the rounds' pairs that have a target."""
    out = []
    for p in (steady or {}).get("pairs", []):
        if p["name"] in TARGETS:
            text, met = TARGETS[p["name"]]
            out.append((p["name"], p["ratio"], f"{text}; {_iv(p)}", bool(met(p))))
    return out


def cold_goals(rows: dict[str, dict]) -> list[tuple[str, float, str, bool]]:
    """Compile goals from the cold runs (issues 13 and 31): not speed ratios, so not from the rounds."""
    js, tc, loop = rows.get("jit-static"), rows.get("torch-compile"), rows.get("jit-loop")
    out = []
    if js and tc and tc["compile_total_ms"]:
        v = js["compile_total_ms"] / tc["compile_total_ms"]
        out.append(("jit-static compile total / Inductor's", v, "<= 0.1", v <= 0.1))
    if js and loop and js["decode_compile_ms"] and loop["decode_compile_ms"]:
        v = loop["decode_compile_ms"] / js["decode_compile_ms"]
        out.append(("jit-loop loop compile / jit-static decode compile", v, "<= 1.5", v <= 1.5))
    return out


def first_difference(a: list[int], b: list[int]) -> int | None:
    """Index of the first token where ``a`` and ``b`` differ over their common length (None: identical)."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def _phases(phases: dict[str, float]) -> str:
    return ", ".join(f"{name} {ms:,.0f}" for name, ms in phases.items())


def print_cold(res: dict) -> None:
    """The model's head line and the cold runs' table, host parts, compile phases and token agreement."""
    from app.core.units import fmt as f

    print(f"\n{res['model']} ({res['dtype']}) on {res['device']} (torch modes on {res['torch_device'] or '-'}): "
          f"{res['params'] / 1e6:.1f} M params, {res['weight_bytes'] / 1e6:.0f} MB weights; "
          f"bandwidth {res['bandwidth_gbs']:,.1f} GB/s ({res['bandwidth_method']}) -> bound "
          f"{res['bound_ms_per_token']:.2f} ms/token; "
          f"torch threads {res['torch_threads']}, Inductor cache {res['inductor_cache']}")
    print("cold runs (each mode once; speed ratios come from the paired rounds below):")
    print(f"{'mode':<14} {'device':<28} {'tokens':>6} {'1st prefill ms':>14} {'1st decode ms':>14} {'compile ms':>11} "
          f"{'compiles':>8} {'steady ms/tok':>14} {'x bound':>8} {'host %':>7} {'cache':>6}")
    for r in res["modes"]:
        print(f"{r['mode']:<14} {r['device'][:28]:<28} {r['tokens']:>6} {f(r['first_prefill_ms'], ',.1f'):>14} "
              f"{f(r['first_decode_ms'], ',.1f'):>14} {f(r['compile_total_ms'], ',.0f'):>11} {r['compiles']:>8} "
              f"{f(r['steady_ms_per_token'], ',.2f'):>14} {f(r['ratio_to_bound'], '.2f'):>8} "
              f"{f(r['host_share'] and r['host_share'] * 100, '.1f'):>7} {f(r['cache_len'], 'd'):>6}")
    for r in res["modes"]:
        if r["host_ms"]:
            parts = " · ".join(f"{k} {v:.3f}" for k, v in r["host_ms"].items())
            print(f"  {r['mode']} steady decode call on the host (medians, ms): {parts}; {r['leaves']} argument leaves")
        for kind in ("prefill", "decode"):
            if r[f"{kind}_phases"]:
                print(f"  {r['mode']} first {kind} compile phases (ms): {_phases(r[f'{kind}_phases'])}")
    ids = {r["mode"]: r["token_ids"] for r in res["modes"]}
    same = all(v[: len(w)] == w[: len(v)] for v in ids.values() for w in ids.values())
    print(f"greedy tokens identical across modes (common prefix): {same}")
    ref = next(iter(ids), None)
    for mode, tokens in ids.items():
        if mode != ref and ref is not None:
            at = first_difference(ids[ref], tokens)
            n = min(len(ids[ref]), len(tokens))
            print(f"  {mode} vs {ref}: " + (f"identical over {n} tokens" if at is None else
                                           f"first differs at token {at} ({ids[ref][at]} vs {tokens[at]})"))


def _iv(p: dict) -> str:
    if p["ci_low"] is None:
        return "no interval"
    return f"95 % CI {p['ci_low']:.2f}–{p['ci_high']:.2f}"


def print_steady(steady: dict, x_bound: dict[str, float | None], probes: list[float]) -> None:
    """The rounds: head line (rounds, dropped, A/A floor, threads, why they stopped, the probes), each lane's
    median ms and × bound, each pair's ratio with its interval."""
    aa = steady["aa_noise"]
    threads = " · ".join(f"{k} {v}" for k, v in steady["threads"].items())
    print(f"paired rounds: {steady['rounds']} kept of {steady['rounds_run']} ({steady['dropped']} dropped), "
          f"A/A ({steady['aa_mode']} twice) " + (f"±{aa:.1f} %" if aa is not None else "–")
          + (" — noisy machine" if steady["noisy"] else "") + f"; threads {threads}; stopped: "
          f"{steady['stopped_by']} after {steady['elapsed_s']:.1f} s; read bandwidth "
          + " → ".join(f"{g:.1f}" for g in probes) + " GB/s (before → after the rounds)")
    for label, ms in steady["median_ms"].items():
        xb = x_bound.get(label)
        print(f"  {label:<16} {ms:8.2f} ms/{'call' if label.startswith('products') else 'token'} (median block)"
              + (f", {xb:.2f}x the bound" if xb is not None else ""))
    for p in steady["pairs"]:
        print(f"  {p['name']:<36} {p['ratio']:.3f} ({_iv(p)}; {p['rounds']} rounds; A/A "
              + (f"±{p['aa_noise']:.1f} %" if p["aa_noise"] is not None else "–") + f"; {p['dropped']} dropped)")
    for why in steady["dropped_rounds"]:
        print(f"  dropped {why}")


def print_result(res: dict) -> None:
    """Everything of one model: cold runs, rounds, targets, issue 38's long runs."""
    print_cold(res)
    if res.get("steady"):
        print_steady(res["steady"], res["x_bound"], res["probes_gbs"])
    for name, value, target, met in res["goals"]:
        print(f"goal {name}: {value:.2f} (target {target}) {'PASS' if met else 'MISS'}")
    for r in res["long_runs"]:
        if r["ratio"] is not None:
            print(f"goal {r['mode']} first {r['first']} tokens of {r['long_tokens']:,} / a {r['short_tokens']}-token "
                  f"run: {r['ratio']:.2f} (target <= 1.2) {'PASS' if r['ratio'] <= 1.2 else 'MISS'}")
