"""The walk's actions of issue 55 (a base of :class:`walk_actions.Walk`; drawn in the full walk only,
:class:`walk_machine.FullWalkMachine`): a settings race of two compiler settings (the Demo kit's Settings race, on
the built-in model's decode step or on a gallery program's entry point), a saved session opened as an overlay
(File ▸ Open session…, read on the compute thread), and a mixture-of-experts run (a tiny random Mixtral, built
once per process, loaded from the model box, a few tokens, then the built-in model again). Each is a generator of
conditions to wait for, as every action of the walk."""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

from walk_checks import MODEL, ROOT, SETTLE_S

#: Pairs of compiler settings the settings race draws from (XLA optimization levels; the baseline "default" among
#: them: a race always runs its baseline too, and two lanes keep it ~10 s)
SETTING_PAIRS = (("default", "O0"), ("default", "O1"))
RACE_TARGETS = ("model", "program")
RACE_EXAMPLE = "01_jit_speedup"  # its entry point raced under two settings (4 calls each)
LIVE_WAIT_S = 1.5  # after opening the program: a live trace may start (its Stop is checked meanwhile)
_MOE: list[str] = []  # the tiny MoE model's folder, built once per process


def moe_model_dir() -> str:
    """A saved tiny random Mixtral (1 layer, hidden 64, 4 experts, top-2, vocab 320; the pattern of
    ``tests/core/engine/test_moe_models.py``) with a byte-level BPE tokenizer; built once per process (~2 s)."""
    if _MOE:
        return _MOE[0]
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedTokenizerFast

    path = Path(tempfile.mkdtemp(prefix="walk-moe-"))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([(ROOT / "README.md").read_text(encoding="utf-8")[:20_000]], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    fast.save_pretrained(path)
    eos = fast.eos_token_id
    config = AutoConfig.for_model("mixtral", vocab_size=320, bos_token_id=eos, eos_token_id=eos, hidden_size=64,
                                  intermediate_size=128, num_hidden_layers=1, num_attention_heads=4,
                                  num_key_value_heads=2, max_position_embeddings=256, num_local_experts=4,
                                  num_experts_per_tok=2)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("mlp.gate.weight"):
                param.normal_(0.0, 1.0)  # decisive routing (the init's near-equal logits make top-2 a coin toss)
    model.save_pretrained(path)
    _MOE.append(str(path))
    return str(path)


class MoreActions:
    """Issue 55's actions (mixed into :class:`walk_actions.Walk`, whose helpers they use)."""

    def do_settings_race(self, a: dict):
        """Race two compiler settings (no steady-state rounds: a few seconds) on the model or a program entry."""
        win = self.window
        demo = win.demo
        sr = demo.settings_race
        names = list(a["settings"])
        if a["on"] == "program":
            if not self.open_example(RACE_EXAMPLE):
                return
            win.programs.panel.set_values({"n_calls": 4})
            t = time.monotonic() + LIVE_WAIT_S  # a live trace may start meanwhile: live_stop is checked
            yield lambda: time.monotonic() > t
            yield self.idle
        else:
            yield from self.show("Run")
            win.ui.form.set_values({"max_new_tokens": 4, "stop_at_eos": False})
        demo.controls.set_steady(False)
        sr.controls.set_checked(names)
        sr.controls.typed_edit.setText("")
        yield self.after(0.1)
        sr.controls.race_button.click()
        yield from self.wait_busy_then_idle()
        self.shot("settings_race-done")  # every new action leaves a screenshot (NN-name.png) to look at
        got = [p.name for p in sr.plot.points]
        if got != names:  # the baseline first, then the other setting
            self.fail("settings_race", f"the trade-off plot's points are {got}, not {names} "
                                       f"(message: {sr.controls.message_text()!r}, status: {win.status.text()!r})")

    def do_overlay(self, a: dict):
        """Open a session file the walk saved (the first; else the runs now, saved first) as an overlay, read on
        the compute thread (File ▸ Open session…); each reopened run renumbered says which run it was."""
        from app.core.recording import load_all

        win = self.window
        saved = sorted(self.out.glob("*.session"))
        path = saved[0] if saved else self.out / f"overlay-{self.step:02d}.session"
        if not saved and not (win.sessions.save(path) and path.exists()):
            yield self.after(0.1)
            return  # nothing to save: the status line said why
        last = max((r.run_id for r in win.session.runs), default=0)  # the plot keeps a few units: by number
        if not win.sessions.open_paths([path], background=True):
            return
        yield from self.wait_busy_then_idle()
        yield self.after(SETTLE_S)
        self.shot("overlay-done")
        recorded = [r.label for f in load_all([path]) for r in f.runs]
        for run, label in zip([r for r in win.session.runs if r.run_id > last], recorded, strict=False):
            own = re.match(r"run (\d+)\b", label)
            if own and int(own.group(1)) != run.run_id and f"(as run {own.group(1)})" not in run.label:
                self.fail("overlay_names", f"{path.name}'s {label!r} reopened as {run.label!r} without "
                                           f"'(as run {own.group(1)})'")

    def do_moe(self, a: dict):
        """Load the tiny MoE model, run ``tokens`` tokens, then load the built-in model again."""
        win = self.window
        yield from self.show("Run")
        win.ui.model_picker.set_current_model(moe_model_dir())
        win.ui.form.set_values({"mode": "jit-static", "max_new_tokens": a["tokens"], "stop_at_eos": False})
        last = max((r.run_id for r in win.session.runs), default=0)  # the plot keeps a few units: by number
        win.ui.prompt.run_button.click()
        yield from self.wait_busy_then_idle(10.0)  # the load first
        yield self.after(SETTLE_S)
        new = [r for r in win.session.runs if r.run_id > last]
        if not new or new[-1].finished is None or new[-1].finished.reason in ("stopped", "error"):
            self.fail("moe", f"the MoE run did not run (status: {win.status.text()!r})")
        self.shot("moe-run")
        self.check()  # the MoE run's window: every invariant, the Experts-per-token strip shown
        self.check_still("moe run")  # the Experts-per-token strip moves nothing (issue 55: Run/Stop by 143 px)
        win.ui.model_picker.set_current_model(MODEL)
        win.request_load(MODEL)
        yield from self.wait_busy_then_idle(10.0)
