"""GPT-2's Conv1D weights kept on JAX as nn.Linear keeps them, ``(out_features, in_features)`` (issue 38:
``app.core.runtime.linear_layout``): the values are the stored weights transposed, every JAX mode decodes PyTorch's
greedy tokens, the PyTorch model is left as loaded, the projections' equations link to the model's own lines, and a
``tp`` mesh splits them as Linear layers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from app.core.inspect.source_map import build_source_map
from app.core.parallel.mesh import weight_spec
from app.core.runtime.linear_layout import conv1d_modules
from app.core.settings import GenerationSettings

PROMPT = "The jit function traces"
PROJECTIONS = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")
#: Tokens per mode (6 otherwise): jit-dynamic compiles every step and torchax-eager each op of every new shape (its
#: cache grows each step): the prefill and two decode steps.
NEW_TOKENS = {"jit-dynamic": 3, "torchax-eager": 3}


@pytest.fixture(scope="module")
def gpt2(engines):
    return engines("gpt2")


def test_each_conv1d_weight_is_its_stored_weight_transposed(gpt2):
    weights, _ = gpt2.jax_state()
    params = dict(gpt2.model.named_parameters())
    names = [f"transformer.h.{i}.{p}.weight" for i in range(2) for p in PROJECTIONS]
    assert sorted(f"{n}.weight" for n in conv1d_modules(gpt2.model)) == sorted(names)
    for name in names:
        stored = params[name].detach().numpy()
        assert weights[name].shape == stored.shape[::-1], name
        np.testing.assert_array_equal(np.asarray(weights[name]), stored.T)
    bias = "transformer.h.0.attn.c_attn.bias"
    np.testing.assert_array_equal(np.asarray(weights[bias]), params[bias].detach().numpy())


@pytest.mark.parametrize("mode", ["jit-static", "jit-loop", "jit-dynamic", "torchax-eager"])
def test_every_jax_mode_decodes_pytorchs_tokens_and_leaves_the_torch_model_as_loaded(gpt2, mode):
    n_new = NEW_TOKENS.get(mode, 6)
    ids = gpt2.encode(PROMPT)
    mask = torch.ones(1, len(ids), dtype=torch.long)
    ref = gpt2.model.generate(torch.tensor([ids]), attention_mask=mask, max_new_tokens=n_new, do_sample=False)
    events = list(gpt2.generate(PROMPT, GenerationSettings(mode=mode, max_new_tokens=n_new, stop_at_eos=False)))
    assert events[-1].token_ids == ref[0, len(ids):].tolist()
    for module in conv1d_modules(gpt2.model).values():  # the torch model runs transformers' own Conv1D again
        assert "forward" not in module.__dict__ and module.weight.shape == (module.nx, module.nf)
    again = gpt2.model.generate(torch.tensor([ids]), attention_mask=mask, max_new_tokens=n_new, do_sample=False)
    assert torch.equal(again, ref)


def test_the_projections_link_to_the_models_call_not_to_the_conversion(gpt2):
    list(gpt2.generate(PROMPT, GenerationSettings(mode="jit-static", max_new_tokens=3)))
    smap = build_source_map(gpt2.ir[("jit-static", "decode")], "decode", gpt2.model)
    labels = [label.removeprefix("weights['").removesuffix("']") for label in smap.input_labels]
    readers = {}  # each projection weight's first reader: the product itself, over the weight as passed in
    for eq in smap.equations:
        for op in eq.operands:
            if op < 0 and labels[-1 - op].endswith(tuple(f"{p}.weight" for p in PROJECTIONS)):
                readers.setdefault(labels[-1 - op], eq)
    assert len(readers) == 2 * len(PROJECTIONS), sorted(readers)
    for label, eq in readers.items():
        assert eq.primitive == "dot_general", (label, eq.primitive)  # no transposed copy of the weight first
        assert eq.file.endswith("transformers/models/gpt2/modeling_gpt2.py"), (label, eq.file, eq.line)
        layer = label.split(".")[2]
        assert eq.module == f"transformer.h.{layer}.{label.split('.')[3]}", (label, eq.module)


def test_a_tp_mesh_splits_the_projections_as_linear_layers():
    # (out, in) weights: c_attn / c_fc on their output features, c_proj on its input features (Megatron-LM)
    assert weight_spec("transformer.h.0.attn.c_attn.weight", (192, 64), 4) == ("tp", None)
    assert weight_spec("transformer.h.0.attn.c_attn.bias", (192,), 4) == ("tp",)
    assert weight_spec("transformer.h.0.mlp.c_fc.weight", (256, 64), 4) == ("tp", None)
    assert weight_spec("transformer.h.0.attn.c_proj.weight", (64, 64), 4) == (None, "tp")
    assert weight_spec("transformer.h.0.mlp.c_proj.weight", (64, 256), 4) == (None, "tp")
    assert weight_spec("transformer.h.0.mlp.c_proj.bias", (64,), 4) == ()
