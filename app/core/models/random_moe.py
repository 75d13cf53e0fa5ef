"""Small mixture-of-experts shapes with random weights, for showing a MoE model offline (issue 42).

``random:mixtral-tiny`` and ``random:qwen3-moe-tiny`` are :data:`app.core.models.sources.SHAPE_PRESETS`: built
with ``from_config`` at load (seed 0, about a second), no files, no network; they reuse pydoc-llama's tokenizer
(vocabulary 8,192) as every random preset does. transformers initialises a router's weights like any linear
layer's (std ``initializer_range`` = 0.02), which leaves the experts' logits nearly equal: top-k would then pick
between float rounding orders, and JAX's and PyTorch's tokens could part on a near tie. :func:`widen_routers`
redraws the routers' weights with std :data:`ROUTER_STD` (seeded), so each token's routing is decisive and
varies from token to token — what a routing view should show — and greedy tokens equal transformers' (tested).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

#: Std of the routers' random weights: router logits of std ~2.4 at hidden 256 (see the module docstring).
ROUTER_STD = 0.15
_COMMON = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=4, num_attention_heads=8,
               num_key_value_heads=4, vocab_size=8192, max_position_embeddings=2048, num_experts_per_tok=2,
               tie_word_embeddings=False)
#: name → (architecture, config kwargs): 4 layers, hidden 256, 8 experts, top-2.
MOE_PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "mixtral-tiny": ("mixtral", dict(num_local_experts=8, **_COMMON)),
    "qwen3-moe-tiny": ("qwen3_moe", dict(num_experts=8, moe_intermediate_size=256, head_dim=32, decoder_sparse_step=1,
                                         norm_topk_prob=True, **_COMMON)),
}


def widen_routers(model: torch.nn.Module, seed: int = 0) -> int:
    """Redraw every MoE router's weight (``*.mlp.gate.weight``) of the torch ``model`` from N(0, ROUTER_STD²)
    with a seeded generator, in place; returns how many were redrawn."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    n = 0
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("mlp.gate.weight"):
                drawn = torch.randn(param.shape, generator=gen, dtype=torch.float32) * ROUTER_STD
                param.copy_(drawn.to(param.dtype))
                n += 1
    return n
