"""A decode step's matrix-vector products alone: how close the weights' products come to the read bandwidth.

    .venv/bin/python bench/matvec_only.py [--shapes smollm2 gpt2] [--calls 40]

Per model shape (float32, random weights): every projection of every layer and the output head as one jitted
chain of matrix-vector products in the model's form (a ``(1, in)`` activation times ``Wᵀ``, as ``nn.Linear`` runs
it), each layer's input depending on the last (nothing else: no norms, no attention, no cache), timed as the median of ``--calls`` calls; then the same bytes as one product of a single
``(rows, hidden)`` matrix; then the read-bandwidth probe (:func:`app.core.profile.probes.read_bandwidth_gbs`, 1 GiB).
A decode step cannot beat its products alone, so ``chain ÷ bound`` is the floor of ``× bound`` that XLA:CPU's
kernels leave for these shapes on this machine, and ``chain ÷ single`` what splitting the weights into
per-layer products costs. Shapes: SmolLM2-135M (30 layers, hidden 576, MLP 1536, 3 key/value heads of 64, vocabulary
49,152, tied head) and GPT-2 small (12 layers, hidden 768, MLP 3072, vocabulary 50,257), as their configs give.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: ``(layers, hidden, [(rows, cols) of each layer's products], head rows)``
SHAPES = {
    "smollm2": (30, 576, [(576, 576), (192, 576), (192, 576), (576, 576), (1536, 576), (1536, 576), (576, 1536)],
                49152),
    "gpt2": (12, 768, [(2304, 768), (768, 768), (3072, 768), (768, 3072)], 50257),
}


def _median_ms(fn, args, calls: int) -> float:
    import time

    fn(*args).block_until_ready()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2] * 1000


def _xwt(x, w):
    """``x · Wᵀ`` as one ``dot_general`` contracting both operands' dimension 1 (``rhs_contracting_dims={1}``, the
    decode step's form; ``x @ w.T`` made XLA:CPU copy the transposed weight on every call)."""
    from jax import lax

    return lax.dot_general(x, w, (((1,), (1,)), ((), ())))


def chain_of(layers_shapes: list[list[tuple[int, int]]], head_rows: int, hidden: int, seed: int = 0):
    """``(jitted chain, its arguments, weight bytes)``: random float32 weights of these shapes (per layer, each
    ``(rows, cols)``; then the head, ``(head_rows, hidden)``) and the jitted chain of their matrix-vector products,
    each layer's input depending on the last (nothing else: no norms, no attention, no cache)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(seed)

    def weight(rows: int, cols: int):
        return jnp.asarray(rng.standard_normal((rows, cols), dtype=np.float32) * 0.02)

    layers = [[weight(r, c) for r, c in shapes] for shapes in layers_shapes]
    head = weight(head_rows, hidden)
    n_bytes = sum(w.nbytes for layer in layers for w in layer) + head.nbytes

    def chain(layers, head, x):  # x: (1, hidden), each product x · Wᵀ as the model's linear layers run it
        for layer in layers:
            acc = x
            for w in layer:  # every product reads the layer's input or the previous product, cut or padded to fit
                acc = _xwt(acc if acc.shape[1] == w.shape[1] else jnp.resize(acc, (1, w.shape[1])), w)
            x = x + jnp.resize(acc, x.shape) * 1e-3
        return _xwt(x, head)

    return jax.jit(chain), (layers, head, jnp.ones((1, hidden), jnp.float32)), n_bytes


def model_products(model) -> tuple[list[list[tuple[int, int]]], int, int]:
    """``(per-layer product shapes, head rows, hidden)`` of a PyTorch causal LM: every ``nn.Linear`` and
    transformers ``Conv1D`` (its weight stored ``(in, out)``) under a numbered layer (``….layers.3.…``,
    ``….h.3.…``) in module order, ``(out, in)`` each, grouped per layer; the head is the output embedding."""
    import torch

    layers: dict[int, list[tuple[int, int]]] = {}
    for name, mod in model.named_modules():
        found = re.search(r"\.(\d+)\.", f".{name}.")
        if found is None:
            continue
        if isinstance(mod, torch.nn.Linear):
            layers.setdefault(int(found.group(1)), []).append(tuple(mod.weight.shape))
        elif type(mod).__name__ == "Conv1D":
            rows, cols = mod.weight.shape[1], mod.weight.shape[0]
            layers.setdefault(int(found.group(1)), []).append((rows, cols))
    head = model.get_output_embeddings().weight
    return [layers[i] for i in sorted(layers)], int(head.shape[0]), int(head.shape[1])


def measure(name: str, calls: int) -> dict[str, float]:
    """``{"bytes", "chain_ms", "single_ms"}`` of shape ``name`` (a key of :data:`SHAPES`)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    n_layers, hidden, products, head_rows = SHAPES[name]
    fn, args, n_bytes = chain_of([products] * n_layers, head_rows, hidden)
    chain_ms = _median_ms(fn, args, calls)
    x = args[2]
    del fn, args
    single = jnp.asarray(np.random.default_rng(1).standard_normal((n_bytes // 4 // hidden, hidden),
                                                                   dtype=np.float32) * 0.02)
    single_ms = _median_ms(jax.jit(lambda w, v: _xwt(v, w)), (single, x), calls)
    return {"bytes": n_bytes, "chain_ms": chain_ms, "single_ms": single_ms}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=["smollm2", "gpt2"])
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    from app.core.profile.probes import read_bandwidth_gbs

    for name in args.shapes:
        r = measure(name, args.calls)
        gbs = read_bandwidth_gbs(1 << 30, repeats=5, cached=False)
        bound_ms = r["bytes"] / gbs / 1e6
        print(f"{name}: {r['bytes'] / 1e6:,.0f} MB of weights; probe {gbs:.1f} GB/s -> bound {bound_ms:.2f} ms")
        print(f"  products chained per layer: {r['chain_ms']:.2f} ms ({r['bytes'] / r['chain_ms'] / 1e6:.1f} GB/s), "
              f"{r['chain_ms'] / bound_ms:.2f}x the bound")
        print(f"  one product of the same bytes: {r['single_ms']:.2f} ms ({r['bytes'] / r['single_ms'] / 1e6:.1f} "
              f"GB/s), {r['single_ms'] / bound_ms:.2f}x the bound; chain / single {r['chain_ms'] / r['single_ms']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
