"""Issue 29, flaw 3: a window that opened without a loaded model (as it does on a .session file) runs its first
prompt with the chat template of the model that run loads — not the form's "no template" of no model at all."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from conftest import run_and_wait  # noqa: E402

PYDOC = Path(__file__).resolve().parents[3] / "assets" / "models" / "pydoc-llama"
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


def test_run_after_a_failed_load_says_it_tried_again(qtbot, make_window, tmp_path):
    """Issue 29, flaw 5: after a load failed (a text file renamed .gguf), Run retries it and says so — it never
    looks like a dead button."""
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model\n" * 20)
    win = make_window(str(bad), autoload=False)
    win.ui.model_picker.set_current_model(str(bad))
    win.run()
    qtbot.waitUntil(lambda: win.ui.model_error.isVisible() and not win.is_busy(), timeout=60_000)
    first = win.status.text()
    assert "not a readable GGUF file" in first and "tried again" not in first
    win.run()
    qtbot.waitUntil(lambda: "tried again" in win.status.text() and not win.is_busy(), timeout=60_000)
    assert "pick another model" in win.status.text()
