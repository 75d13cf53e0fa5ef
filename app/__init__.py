"""torchax-playground: run a Hugging Face causal LM on JAX through torchax and inspect what JAX does."""

import os

# PyTorch's CPU kernels (eager ops and Inductor's C++ code) run on libgomp, whose idle threads spin at a
# barrier by default (OMP_WAIT_POLICY, https://gcc.gnu.org/onlinedocs/libgomp/OMP_005fWAIT_005fPOLICY.html).
# On 2 cores, whenever another thread needs a core (the window painting the plot, a compile) the spinning
# team starves it and itself: SmolLM2 in `torch` mode went from 59.5 to 166 ms/token beside one busy core,
# torch-compile on the GPT-2 shape from 41 to 59 ms/token. PASSIVE threads sleep instead: 62 and 41 ms/token
# beside the busy core, unchanged when the machine is quiet (60.1, 38.1). libgomp reads the variable when
# torch loads it, so it is set on import of this package, before any torch import; a value the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
