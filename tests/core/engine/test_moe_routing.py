"""The router visible (issue 42): each call's experts come from the run itself, and the jaxpr's grouped matmul
is one ``ragged_dot_general`` equation on the model's own source line. Each mode's run is also the MoE models'
greedy-parity check (its tokens are transformers' ``generate``'s, its compiles at most the mode's): one run per
family and mode serves both (issue 53).

The tiny Mixtral- and Qwen3-MoE-style models of :mod:`test_moe_models`. The routing a call records is compared
with what PyTorch's routers choose on the same tokens (forward hooks of the test's own, on an eager forward):
equal sets of experts per layer and token, in every mode that records (torch-compile records none).
"""

from __future__ import annotations

import json

import jax
import pytest
from test_moe_models import FAMILIES, PROMPT, build_moe_dir, reference, routes

from app.core.engine.engine import load_engine
from app.core.events import CallRecord, FinishedEvent
from app.core.inspect.source_map import build_source_map
from app.core.parallel.mesh import parse_mesh
from app.core.settings import GenerationSettings

MODES = ("jit-static", "jit-loop", "jit-dynamic", "torchax-eager", "torch")
#: Tokens per mode: jit-dynamic compiles every step and torchax-eager compiles each op of every new shape (its
#: cache grows each step), so those two run the prefill and two decode steps (a decode step that reads a cache an
#: earlier decode step wrote); the others ten.
NEW_TOKENS = {"jit-dynamic": 3, "torchax-eager": 3}


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    return {f: load_engine(build_moe_dir(tmp_path_factory.mktemp(f"route-{f}"), f)) for f in FAMILIES}


def recorded(records: list[CallRecord]) -> list[tuple[int, ...]]:
    """The records' experts in :func:`test_moe_models.routes`' order: per call, layer by layer, each token's
    experts sorted; the last token is never fed back, so torch's forward over the text covers the calls."""
    out: list[tuple[int, ...]] = []
    for r in records:
        assert r.experts is not None, f"{r.step} call {r.index} recorded no routing"
        for layer in r.experts:
            out.extend(tuple(sorted(k)) for k in layer)
    return out


def torch_routes(engine, generated: list[int]) -> list[tuple[int, ...]]:
    """PyTorch's routing of the prompt and every generated token but the last, call by call."""
    n_layers = len(engine.routing.layers)
    prompt_len = len(engine.encode(PROMPT))
    chosen = routes(engine, PROMPT, generated[:-1])  # layer-major: layer 0's rows, then layer 1's …
    per_layer = len(chosen) // n_layers
    calls = [range(0, prompt_len)] + [range(p, p + 1) for p in range(prompt_len, per_layer)]
    return [chosen[layer * per_layer + row] for rows in calls for layer in range(n_layers) for row in rows]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_call_records_the_experts_its_run_chose(engines, family, mode):
    engine = engines[family]
    n_new = NEW_TOKENS.get(mode, 10)
    events = list(engine.generate(PROMPT, GenerationSettings(mode=mode, max_new_tokens=n_new)))
    records = [e for e in events if isinstance(e, CallRecord)]
    finished = events[-1]
    assert isinstance(finished, FinishedEvent) and len(records) == len(finished.token_ids) == n_new
    assert finished.token_ids == reference(engine, n_new)  # transformers' greedy tokens, in every mode
    compiles = {"jit-static": 2, "jit-loop": 2, "jit-dynamic": n_new, "torchax-eager": 0, "torch": 0}
    assert finished.summary.n_compiles <= compiles[mode]  # <=: the module's other tests may have compiled
    assert recorded(records) == torch_routes(engine, finished.token_ids)
    prefill, decode = records[0], records[1]
    assert len(prefill.experts) == 2 and len(prefill.experts[0]) == len(engine.encode(PROMPT))  # padding cut
    assert len(decode.experts[0]) == 1 and len(decode.experts[0][0]) == 2  # one token, top-2
    weights = decode.expert_weights[0][0]
    assert abs(sum(weights) - 1.0) < 1e-3  # both families normalise their top-k weights
    line = json.loads(json.dumps(decode.to_json()))  # generate --json writes each record so
    assert line["experts"] == decode.experts and line["expert_weights"] == decode.expert_weights


def test_a_dense_model_records_no_routing(llama_engine):
    assert llama_engine.routing is None
    events = llama_engine.generate(PROMPT, GenerationSettings(mode="jit-static", max_new_tokens=2))
    assert all(e.experts is None for e in events if isinstance(e, CallRecord))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_jaxpr_shows_router_ragged_dot_and_combine_on_model_lines(engines, family):
    engine = engines[family]
    list(engine.generate(PROMPT, GenerationSettings(mode="jit-static", max_new_tokens=2)))
    step_ir = engine.ir[("jit-static", "decode")]
    smap = build_source_map(step_ir, "decode", engine.model)
    ragged = [e for e in smap.equations if e.primitive == "ragged_dot_general"]
    assert len(ragged) == 4  # two layers, two grouped matmuls each (gate_up, down), at the top level
    lines = step_ir.jaxpr_source.split("\n")
    for eqn in ragged:
        assert eqn.file.endswith("transformers/integrations/moe.py") and eqn.function == "_grouped_mm"
        assert eqn.parent == -1 and "aten::_grouped_mm" in eqn.scope
        first = eqn.lines["jaxpr_source"][0]
        assert "ragged_dot_general" in lines[first - 1] and "moe.py" in lines[first - 1]
    router = f"{'Mixtral' if family == 'mixtral' else 'Qwen3Moe'}TopKRouter.forward"
    assert any(e.primitive == "top_k" and e.function == router for e in smap.equations)
    (callback,) = [e for e in smap.equations if e.primitive == "debug_callback"]  # the routing's one host call
    producers = [smap.equations[i] for i in callback.operands if i >= 0]
    # per layer (weights, indices), made by the router's own lines: its top-k (torchax wraps top_k in a jit) and
    # the weights' normalisation; the callback itself sits on the line where the LM calls its decoder
    assert len(producers) == 4 and all(e.function == router for e in producers)
    assert sum(e.primitive in ("top_k", "jit") for e in producers) == 2
    assert callback.function.endswith("ForCausalLM.forward")
    combine = [e for e in smap.equations if e.function == "grouped_mm_experts_forward" and e.primitive == "mul"]
    assert combine  # the weighted sum of the experts' outputs, on transformers' own lines
    files = " ".join(e.file for e in smap.equations)  # our lowering and our hook own no line: the model does
    assert "runtime/moe_ops.py" not in files and "inspect/routing.py" not in files


@pytest.mark.skipif(jax.device_count() < 2, reason="tp=2 needs 2 devices (conftest simulates 4 CPU devices)")
def test_tp2_mesh_records_the_same_routing(engines):
    engine = engines["mixtral"]  # the module's engine, put back on one device after (set_mesh(None))
    settings = GenerationSettings(mode="jit-static", max_new_tokens=5)
    single = [e.experts for e in engine.generate(PROMPT, settings) if isinstance(e, CallRecord)]
    engine.set_mesh(parse_mesh("tp=2"))
    try:
        sharded = [e.experts for e in engine.generate(PROMPT, settings) if isinstance(e, CallRecord)]
    finally:
        engine.set_mesh(None)
    assert sharded == single and all(s is not None for s in sharded)


def test_torch_compile_records_no_routing(tmp_path):
    """Inductor's graphs hold no hook: its records carry no experts (not a stale eager forward's), and the hooks do
    not break ``fullgraph=True``: the tokens are transformers'. The tiniest MoE model (one layer): Inductor builds
    C++ kernels for its prefill and decode graphs."""
    engine = load_engine(build_moe_dir(tmp_path, "mixtral", num_hidden_layers=1))
    events = list(engine.generate(PROMPT, GenerationSettings(mode="torch-compile", max_new_tokens=3)))
    assert all(e.experts is None for e in events if isinstance(e, CallRecord))
    assert events[-1].token_ids == reference(engine, 3)
