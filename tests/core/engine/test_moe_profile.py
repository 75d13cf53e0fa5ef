"""The experts' measured time in Profile (issue 42): a MoE step's summary line splits the ops' time into the
experts' grouped matmuls (instructions made from ``aten::_grouped_mm``) and the rest; a dense step's has no such
part."""

from __future__ import annotations

from types import SimpleNamespace

from test_moe_models import PROMPT, build_moe_dir

from app.core.engine.engine import load_engine
from app.core.profile.columns import profile_summary
from app.core.profile.experts import experts_split
from app.core.profile.model import ProfileRow
from app.core.profile.step import profile_step


def test_split_follows_the_attribution_parts():
    rows = [ProfileRow("fusion.1", wall_us_per_step=300.0), ProfileRow("dot.2", wall_us_per_step=100.0),
            ProfileRow("fusion.3", wall_us_per_step=200.0)]
    parts = {"fusion.1": [{"fraction": 1.0, "aten": "aten::_grouped_mm"}],
             "dot.2": [{"fraction": 1.0, "aten": "linear"}],
             "fusion.3": [{"fraction": 0.25, "aten": "aten::_grouped_mm"}, {"fraction": 0.75, "aten": "aten::mul"}]}
    split = experts_split(SimpleNamespace(rows=rows, parts=parts))
    assert split is not None and abs(split.experts_ms - 0.35) < 1e-9 and abs(split.rest_ms - 0.25) < 1e-9
    assert split.line() == "experts' matmuls 0.35 ms (58% of op time) · other ops 0.25 ms"
    assert experts_split(SimpleNamespace(rows=rows, parts={"dot.2": parts["dot.2"]})) is None


def test_profile_of_a_moe_step_names_the_experts_time(tmp_path, model_dirs):
    engine = load_engine(build_moe_dir(tmp_path, "mixtral"))
    profile = profile_step(engine, PROMPT, step="decode", n_steps=4, warmup=1, bandwidth_gbs=10.0)
    split = experts_split(profile)
    assert split is not None and split.experts_ms > 0 and split.rest_ms > 0
    assert split.line() in profile_summary(profile)
    grouped = [r for r in profile.rows if any(p.get("aten") == "aten::_grouped_mm" for p in profile.parts.get(r.key, []))]
    assert grouped and all("moe.py" in r.source or r.source == "" for r in grouped[:1])
    dense = profile_step(load_engine(model_dirs("llama")), PROMPT, step="decode", n_steps=2, warmup=1,
                         bandwidth_gbs=10.0)
    assert experts_split(dense) is None and "experts'" not in profile_summary(dense)
