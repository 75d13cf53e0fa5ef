"""Issue 29, flaw 3: a window that opened without a loaded model (as it does on a .session file) runs its first
prompt with the chat template of the model that run loads — not the form's "no template" of no model at all."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import run_and_wait  # noqa: E402

PYDOC = Path(__file__).resolve().parents[2] / "assets" / "models" / "pydoc-llama"
TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}<|assistant|>"


def test_first_run_without_a_loaded_model_uses_the_models_chat_template(qtbot, make_window, tmp_path):
    model = tmp_path / "tiny-instruct"  # an instruct name and a chat template: Chat is on by default
    shutil.copytree(PYDOC, model)
    config = json.loads((model / "tokenizer_config.json").read_text())
    (model / "tokenizer_config.json").write_text(json.dumps({**config, "chat_template": TEMPLATE}))
    win = make_window(str(model), tokens=2, autoload=False)
    assert win.loaded is None and not win.ui.form.chat.isEnabled()
    run_and_wait(qtbot, win)
    prompt = win.session.runs[-1].prompt
    assert prompt is not None and prompt.chat and prompt.text.startswith("<|user|>"), prompt
    assert win.ui.form.chat.isEnabled() and win.ui.form.chat.isChecked()
