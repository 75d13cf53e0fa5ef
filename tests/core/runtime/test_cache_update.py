"""A decode step's KV write in place (issue 38): ``aten::index_put`` at one position lowers to a
``dynamic_update_slice`` that equals torchax's scatter, and no compiled decode step or loop body copies a
cache- or weight-sized buffer (counted in the optimized HLO; the scatter made XLA copy each value buffer 4× per
step)."""

from __future__ import annotations

import re

import jax.numpy as jnp
import numpy as np
import pytest

from app.core.runtime.cache_update import index_put, one_position


def _fallback(x, indexes, values, accumulate):
    idx = tuple(slice(None) if i is None else i for i in indexes)
    return x.at[idx].add(values) if accumulate else x.at[idx].set(values)


@pytest.mark.parametrize("axis,index", [(2, 5), (2, -1), (1, 0), (0, 1)])
def test_one_position_equals_the_scatter(axis, index):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((2, 3, 8, 4)), jnp.float32)
    shape = list(x.shape)
    shape[axis] = 1
    values = jnp.asarray(rng.standard_normal(shape), jnp.float32)
    indexes = [None] * axis + [jnp.asarray([index], jnp.int32)]
    assert one_position(x, indexes, values) is not None
    np.testing.assert_array_equal(index_put(x, indexes, values, fallback=_fallback), _fallback(x, indexes, values, False))


def test_other_writes_go_to_torchax_lowering():
    x = jnp.zeros((2, 8, 4))
    calls = []

    def fallback(*args):
        calls.append(args)
        return _fallback(*args)

    two = [None, jnp.asarray([1, 2], jnp.int32)]
    out = index_put(x, two, jnp.ones((2, 2, 4)), fallback=fallback)  # two positions
    assert float(out.sum()) == 16.0
    index_put(x, [None, jnp.asarray([1], jnp.int32)], jnp.ones((2, 1, 4)), accumulate=True, fallback=fallback)
    index_put(x, [jnp.asarray([1], jnp.int32), jnp.asarray([1], jnp.int32)], jnp.ones((4,)), fallback=fallback)
    assert len(calls) == 3


def _big_copies(hlo: str, shapes: set[str]) -> list[str]:
    return [line.strip()[:160] for line in hlo.splitlines()
            if " copy(" in line and (m := re.search(r"= (\w+\[[\d,]*\])", line)) and m.group(1) in shapes]


@pytest.mark.parametrize("mode", ["jit-static", "jit-loop"])
def test_no_decode_step_copies_the_cache_or_the_weights(llama_engine, mode):
    from app.core.settings import GenerationSettings

    list(llama_engine.generate("The jit", GenerationSettings(mode=mode, max_new_tokens=4, stop_at_eos=False)))
    hlo = llama_engine.ir[(mode, "decode")].hlo
    params = re.findall(r"parameter\(\d+\)", hlo)
    assert params
    shapes = {m for m in re.findall(r"(f32\[[\d,]+\])[^ ]* parameter\(", hlo)
              if np.prod([int(d) for d in m[4:-1].split(",")]) >= 256}  # the cache buffers and the weight matrices
    assert shapes and not _big_copies(hlo, shapes), _big_copies(hlo, shapes)[:5]
