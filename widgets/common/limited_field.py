"""Number fields that say why they refuse a value (issue 55): a typed number outside the field's limits is not
dropped or reverted in silence — it is set to the nearest allowed value and a note under the field says so,
with the limit and the reason, in the window's words: "At most 1 — top-p is a share of the probability mass.
7 was set to 1.00."

One mechanism for every field: :class:`Limit` (the bounds, why each exists, an optional special value such as
0 = auto) and :class:`LimitedSpinBox` / :class:`LimitedDoubleSpinBox`, which keep a :class:`FieldNote`.
:func:`with_note` stacks a field over its note for a form row. GUI thread only.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Slot
from PySide6.QtGui import QResizeEvent, QValidator
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QSpinBox, QVBoxLayout, QWidget


@dataclass(frozen=True)
class Limit:
    """A field's allowed values: ``low`` … ``high``, or ``special`` (a value outside them with its own meaning,
    e.g. 0 = auto). ``low_why`` / ``high_why``: why the bound exists, in the user's words."""

    low: float
    high: float
    low_why: str
    high_why: str
    special: float | None = None

    def allows(self, value: float) -> bool:
        return self.low <= value <= self.high or value == self.special

    def nearest(self, value: float) -> float:
        return min(max(value, self.low), self.high)

    def reason(self, value: float) -> str:
        """``"At least 1 — a run makes one new token or more"`` for a ``value`` below ``low``, else the high's."""
        if value < self.low:
            return f"At least {_plain(self.low)} — {self.low_why}"
        return f"At most {_plain(self.high)} — {self.high_why}"


def _plain(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


class FieldNote(QLabel):
    """The note under a field: hidden until the field refuses or clamps a value."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fieldNote")
        self.setWordWrap(True)
        self.setStyleSheet("color: #b45309; font-size: 90%;")
        self.hide()

    def say(self, text: str) -> None:
        self.setText(text)
        self.setVisible(bool(text))
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """Ask for the wrapped text's height: a form in a scroll area otherwise squeezes it to a clipped line."""
        self.setMinimumHeight(self.heightForWidth(max(self.width(), 120)) if self.text() else 0)


class _Limited:
    """What both spin boxes share: :meth:`validate` keeps an out-of-limit number as typed (Intermediate, not a
    dropped key), :meth:`fixup` sets it to the nearest allowed value and writes the note."""

    limit: Limit
    note: FieldNote
    _clamped_to: float | None

    def _setup(self, limit: Limit) -> None:
        self.limit, self.note, self._clamped_to = limit, FieldNote(), None
        self.valueChanged.connect(self._on_value)  # type: ignore[attr-defined]
        self.lineEdit().textEdited.connect(self._on_edited)  # type: ignore[attr-defined]

    def _number(self, text: str) -> float | None:
        box = self  # a QAbstractSpinBox
        body = text.strip()
        for affix in (box.prefix(), box.suffix()):  # type: ignore[attr-defined]
            body = body.replace(affix.strip(), "") if affix.strip() else body
        try:
            return float(body.strip().replace(",", ""))
        except ValueError:
            return None

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:  # noqa: D102 - Qt override
        number = self._number(text)
        if number is not None and not self.limit.allows(number) and text.strip() != self.specialValueText():  # type: ignore[attr-defined]
            return QValidator.State.Intermediate, text, pos
        return super().validate(text, pos)  # type: ignore[misc]

    def fixup(self, text: str) -> str:  # noqa: D102 - Qt override
        number = self._number(text)
        if number is None or self.limit.allows(number):
            return super().fixup(text)  # type: ignore[misc]
        return self.textFromValue(self._clamp(number))  # type: ignore[attr-defined]

    def put(self, value: float) -> None:
        """``setValue`` that says so when ``value`` is outside the limits (a restored setting, a session)."""
        self.setValue(self._clamp(value) if not self.limit.allows(value) else value)  # type: ignore[attr-defined]

    def _clamp(self, value: float) -> float:
        allowed = self.limit.nearest(value)
        self._clamped_to = allowed
        self.note.say(f"{self.limit.reason(value)}. {_plain(value)} was set to {self.textFromValue(allowed)}.")  # type: ignore[attr-defined]
        return allowed

    @Slot(str)
    def _on_edited(self, _text: str) -> None:
        """The user types again: the last note is answered (a new refusal writes a new one)."""
        self._clamped_to = None
        self.note.say("")

    @Slot(object)
    def _on_value(self, value: float) -> None:
        if self._clamped_to is None or value != self._clamped_to:
            self._clamped_to = None
            self.note.say("")


class LimitedSpinBox(_Limited, QSpinBox):
    """A :class:`QSpinBox` whose range is ``limit`` (with its special value) and that explains a clamp."""

    def __init__(self, limit: Limit, value: int, single_step: int = 1) -> None:
        QSpinBox.__init__(self)
        self._setup(limit)
        self.setRange(int(min(limit.low, limit.special if limit.special is not None else limit.low)), int(limit.high))
        self.setSingleStep(single_step)
        self.setValue(value)


class LimitedDoubleSpinBox(_Limited, QDoubleSpinBox):
    """A :class:`QDoubleSpinBox` whose range is ``limit`` and that explains a clamp."""

    def __init__(self, limit: Limit, value: float, single_step: float, decimals: int = 2) -> None:
        QDoubleSpinBox.__init__(self)
        self._setup(limit)
        self.setDecimals(decimals)
        self.setRange(limit.low, limit.high)
        self.setSingleStep(single_step)
        self.setValue(value)


def with_note(field: LimitedSpinBox | LimitedDoubleSpinBox) -> QWidget:
    """``field`` over its note, for one form row (the note takes no room while hidden)."""
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(1)
    lay.addWidget(field)
    lay.addWidget(field.note)
    return box
