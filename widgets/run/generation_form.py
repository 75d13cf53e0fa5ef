"""Generation settings form: mode, dtype, max new tokens, greedy or sampling (temperature, top-k/p, seed).

Plain data in and out: :meth:`GenerationForm.values` returns a dict with the field names of
``app.core.settings.GenerationSettings`` plus ``dtype``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLineEdit, QWidget

from widgets.common.limited_field import Limit, LimitedDoubleSpinBox, LimitedSpinBox, with_note

#: The spin box's maximum: far above any model's positions, so the KV cache, not the box, caps a run.
MAX_NEW_TOKENS = 1 << 20

#: Each number field's limits and why, in the window's words: a value outside them is set to the nearest allowed
#: one and the note under the field says so (issue 55: 0, 99999 or 7 were dropped or clamped without a word).
LIMITS = {
    "max_new_tokens": Limit(1, MAX_NEW_TOKENS, "a run makes one new token or more",
                            "the KV cache ends a run long before that"),
    "cache_len": Limit(2, 1 << 17, "the prompt's last token and one new token (0 = auto)",
                       "larger than any model's positions", special=0),
    "penalty": Limit(0.5, 3.0, "lower boosts repeats until the text loops (1.0 = off)",
                     "higher all but bans repeats: the text falls apart"),
    "temperature": Limit(0.05, 5.0, "colder is greedy in all but name: uncheck 'sample' for greedy",
                         "hotter samples close to uniformly: noise"),
    "top_k": Limit(0, 100_000, "0 disables top-k", "larger than any vocabulary (0 disables top-k)"),
    "top_p": Limit(0.01, 1.0, "some probability mass must stay",
                   "top-p is a share of the probability mass (1.0 disables it)"),
    "seed": Limit(0, 2**31 - 1, "seeds are not negative", "seeds are 32-bit integers"),
}

class GenerationForm(QWidget):
    """The form. Signals (GUI thread): ``dtypeChanged(dtype)`` — a reload is needed to apply it."""

    dtypeChanged = Signal(str)

    def __init__(
        self,
        modes: tuple[str, ...],
        mode_help: dict[str, str],
        dtypes: tuple[str, ...],
        default_mode: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._help = mode_help
        self._build_run_fields(modes, mode_help, dtypes)
        self._build_prompt_fields()
        self._build_sampling_fields()
        self._lay_out()
        self.sample.toggled.connect(self._on_sample)
        self.chat.toggled.connect(self.system.setEnabled)
        self.set_chat_available(False, False)
        if default_mode is not None:
            self.mode.setCurrentText(default_mode)
        self._on_mode(self.mode.currentText())
        self._on_sample(False)

    def _build_run_fields(self, modes: tuple[str, ...], mode_help: dict[str, str], dtypes: tuple[str, ...]) -> None:
        """Mode, dtype, max new tokens and the KV cache's length."""
        self.mode = QComboBox()
        self.mode.setObjectName("modeCombo")
        for i, mode in enumerate(modes):
            self.mode.addItem(mode)
            self.mode.setItemData(i, mode_help.get(mode, ""), Qt.ItemDataRole.ToolTipRole)
        self.mode.currentTextChanged.connect(self._on_mode)
        self.dtype = QComboBox()
        self.dtype.setObjectName("dtypeCombo")
        self.dtype.addItems(list(dtypes))
        self.dtype.setToolTip("float32 is the fast choice on CPU (bfloat16 on XLA:CPU is ~10x slower)")
        self.dtype.currentTextChanged.connect(self.dtypeChanged)
        # no small maximum of its own: a typed 100000 stayed 1000 when the box stopped at 4,096 (issue 29 flaw 20);
        # the model's KV cache is the real cap, and the status line says so before the run
        self.max_new_tokens = LimitedSpinBox(LIMITS["max_new_tokens"], 64)
        self.max_new_tokens.setObjectName("maxTokensSpin")
        self.max_new_tokens.setToolTip(
            "New tokens to generate. A run can end sooner: at the end of text (unless 'ignore end of text'), or "
            "when the KV cache is full (the model's positions) — the status line says so before the run starts.")
        self.cache_len = LimitedSpinBox(LIMITS["cache_len"], 0, single_step=64)
        self.cache_len.setSpecialValueText("auto")
        self.cache_len.setObjectName("cacheLenSpin")
        self.cache_len.setSuffix(" positions")
        self.cache_len.setToolTip("Static KV-cache length (prompt + generated tokens). auto = the prompt's bucket "
                                  "+ max new tokens, rounded up to 64, capped at the model's positions")

    def _build_prompt_fields(self) -> None:
        """Ignore end of text, chat template, system prompt and repetition penalty."""
        self.ignore_eos = QCheckBox("ignore end of text")
        self.ignore_eos.setObjectName("ignoreEosCheck")
        self.ignore_eos.setToolTip("Always generate max new tokens. For timing runs and races: a prompt that ends at once "
                                   "still yields every step")
        self.chat = QCheckBox("chat template")
        self.chat.setObjectName("chatCheck")
        self.chat.setToolTip("On for instruct models. Wrap the prompt in the model's chat template: the formatted prompt shows dimmed "
                             "and the answer stops at the end-of-turn token")
        self.system = QLineEdit(placeholderText="system prompt (optional)")
        self.system.setObjectName("systemEdit")
        self.penalty = LimitedDoubleSpinBox(LIMITS["penalty"], 1.0, 0.05)
        self.penalty.setObjectName("repetitionPenaltySpin")
        self.penalty.setToolTip("transformers' repetition penalty, inside the jitted step; 1.0 = off. "
                                "1.1–1.3 keeps greedy answers from looping")

    def _build_sampling_fields(self) -> None:
        """Sample or greedy, temperature, top-k, top-p and seed."""
        self.sample = QCheckBox("sample (unchecked = greedy)")
        self.sample.setObjectName("sampleCheck")
        self.temperature = LimitedDoubleSpinBox(LIMITS["temperature"], 0.8, 0.05)
        self.top_k = LimitedSpinBox(LIMITS["top_k"], 50)
        self.top_k.setToolTip("0 disables top-k")
        self.top_p = LimitedDoubleSpinBox(LIMITS["top_p"], 0.95, 0.05)
        self.top_p.setToolTip("1.0 disables nucleus sampling")
        self.seed = LimitedSpinBox(LIMITS["seed"], 0)

    def _lay_out(self) -> None:
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        rows = (("Mode", self.mode), ("dtype", self.dtype), ("Max new tokens", self.max_new_tokens),
                ("KV cache", self.cache_len), ("", self.ignore_eos), ("", self.chat), ("System", self.system),
                ("Repetition penalty", self.penalty), ("", self.sample), ("Temperature", self.temperature),
                ("Top-k", self.top_k), ("Top-p", self.top_p), ("Seed", self.seed))
        for label, widget in rows:
            form.addRow(label, with_note(widget) if isinstance(widget, (LimitedSpinBox, LimitedDoubleSpinBox))
                        else widget)

    def say(self, setting: str, text: str) -> bool:
        """Show ``text`` under the field of ``setting`` (a ``GenerationSettings`` attribute: a refusal from the
        engine, e.g. a KV cache longer than the model's positions); False when no field holds that setting."""
        fields = {"max_new_tokens": self.max_new_tokens, "max_cache_len": self.cache_len, "top_k": self.top_k,
                  "repetition_penalty": self.penalty, "temperature": self.temperature, "top_p": self.top_p,
                  "seed": self.seed}
        if setting not in fields:
            return False
        fields[setting].note.say(text)
        return True

    def clear_notes(self) -> None:
        """Hide every field's note (a run that worked answers them)."""
        for field in self.limited_fields():
            field.note.say("")

    def limited_fields(self) -> tuple[LimitedSpinBox | LimitedDoubleSpinBox, ...]:
        """The number fields, each with its note (:mod:`widgets.common.limited_field`)."""
        return (self.max_new_tokens, self.cache_len, self.penalty, self.temperature, self.top_k, self.top_p,
                self.seed)

    def set_chat_available(self, available: bool, default: bool) -> None:
        """A model was loaded: Chat is enabled when its tokenizer has a chat template, checked by default for
        an instruct model."""
        self.chat.setEnabled(available)
        self.chat.setChecked(available and default)
        self.system.setEnabled(available and default)

    @Slot(str)
    def _on_mode(self, mode: str) -> None:
        self.mode.setToolTip(self._help.get(mode, ""))

    @Slot(bool)
    def _on_sample(self, on: bool) -> None:
        for w in (self.temperature, self.top_k, self.top_p, self.seed):
            w.setEnabled(on)

    def values(self) -> dict[str, Any]:
        """``mode, max_new_tokens, max_cache_len (None = auto), stop_at_eos, temperature (0 = greedy), top_k, top_p, seed, dtype``."""
        sampling = self.sample.isChecked()
        for field in self.limited_fields():  # a number still being typed (Ctrl+Enter) is read, or its note shown
            field.interpretText()
        return {
            "mode": self.mode.currentText(),
            "max_new_tokens": self.max_new_tokens.value(),
            "max_cache_len": self.cache_len.value() or None,
            "stop_at_eos": not self.ignore_eos.isChecked(),
            "chat": self.chat.isEnabled() and self.chat.isChecked(),
            "system_prompt": self.system.text().strip() if self.chat.isChecked() else "",
            "repetition_penalty": round(self.penalty.value(), 4),
            "temperature": round(self.temperature.value(), 4) if sampling else 0.0,
            "top_k": self.top_k.value() if sampling else 0,
            "top_p": round(self.top_p.value(), 4) if sampling else 1.0,
            "seed": self.seed.value(),
            "dtype": self.dtype.currentText(),
        }

    def set_values(self, values: dict[str, Any]) -> None:
        """Restore from :meth:`values` output; unknown keys are ignored, missing keys keep their value."""
        if values.get("mode") and self.mode.findText(values["mode"]) >= 0:
            self.mode.setCurrentText(values["mode"])
        if values.get("dtype") and self.dtype.findText(values["dtype"]) >= 0:
            self.dtype.setCurrentText(values["dtype"])
        if "max_new_tokens" in values:
            self.max_new_tokens.put(int(values["max_new_tokens"]))
        if "max_cache_len" in values:
            self.cache_len.put(int(values["max_cache_len"] or 0))
        if "system_prompt" in values:
            self.system.setText(str(values["system_prompt"] or ""))
        if "repetition_penalty" in values:
            self.penalty.put(float(values["repetition_penalty"]))
        if "stop_at_eos" in values:
            self.ignore_eos.setChecked(not values["stop_at_eos"])
        temperature = float(values.get("temperature", 0.0) or 0.0)
        self.sample.setChecked(temperature > 0)
        if temperature > 0:
            self.temperature.put(temperature)
            self.top_k.put(int(values.get("top_k", self.top_k.value())))
            self.top_p.put(float(values.get("top_p", self.top_p.value())))
        if "seed" in values:
            self.seed.put(int(values["seed"]))
