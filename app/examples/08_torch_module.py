"""A PyTorch nn.Module through torchax

torchax.extract_jax turns the module into a pure JAX function of (weights, args): the weights are passed as an
argument, never closed over (closing over them would embed them in the program as constants). Each jaxpr
equation sits in an aten:: scope and points at the line of forward() that issued it.
"""

import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 8)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x))
        return torch.softmax(self.fc2(h), dim=-1)


torch.manual_seed(0)
model = MLP().eval()


def model_args():
    # Example inputs as torch tensors; the playground converts them to JAX arrays.
    return (torch.randn(4, 32, generator=torch.Generator().manual_seed(1)),)
