"""One crash report: what failed, where, whose code, on which thread, with the versions, backend,
``XLA_FLAGS`` and the last actions — as the text the dialog shows, "Copy report" copies and
``torchax-playground report --last`` prints."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal

from app.core.crash.blame import UserFrame, user_frame, user_frame_in_fault
from app.core.crash.facts import facts_lines

#: ``exception``: a Python exception nobody caught (the app went on); ``hard crash``: the process died
#: (segmentation fault, abort: the ``faulthandler`` dump of a previous run); ``unraisable``: an exception Python
#: could not raise (in a ``__del__``, a weakref callback).
Kind = Literal["exception", "hard crash", "unraisable"]
HEADER = "torchax-playground crash report (written on this machine; nothing is uploaded)"


@dataclass
class CrashReport:
    """``title``: one line (``"ZeroDivisionError: division by zero"``, ``"Segmentation fault"``); ``details``:
    the Python traceback or the ``faulthandler`` dump; ``thread``: where it happened (``"GUI thread"``,
    ``"compute thread"``, a thread's name); ``user``: the frame in the user's program, if the fault is there;
    ``when``: local time ``YYYY-mm-dd HH:MM:SS``; ``facts``: versions, OS, backend, XLA_FLAGS lines; ``actions``:
    the last actions, oldest first."""

    kind: Kind
    title: str
    details: str
    thread: str = ""
    user: UserFrame | None = None
    when: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S"))
    facts: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)

    @property
    def headline(self) -> str:
        """Whose fault and what: ``"Your program raised ZeroDivisionError: … at /x/prog.py:12 in f"`` or
        ``"torchax playground hit an error: KeyError: 'x'"``."""
        verb = {"exception": "raised", "hard crash": "crashed the app:", "unraisable": "raised (unraisable)"}[self.kind]
        if self.user is not None:
            return f"Your program {verb} {self.title} at {self.user.where()}"
        if self.kind == "hard crash":
            return f"torchax playground crashed: {self.title}"
        return f"torchax playground hit an error: {self.title}"

    def text(self) -> str:
        """The whole report as plain text (what "Copy report" puts on the clipboard)."""
        lines = [HEADER, f"when: {self.when}", f"what: {self.headline}"]
        if self.thread:
            lines.append(f"thread: {self.thread}")
        if self.user is not None:
            lines.append(f"your file: {self.user.file}, line {self.user.line} (in {self.user.function})")
        lines += ["", "Versions and environment", *(f"  {x}" for x in self.facts)]
        lines += ["", "Last actions (oldest first)", *(f"  {x}" for x in self.actions or ["(none recorded)"])]
        name = "faulthandler dump" if self.kind == "hard crash" else "Traceback"
        lines += ["", name, self.details.rstrip()]
        return "\n".join(lines) + "\n"


def from_exception(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None, *,
                   thread: str = "", actions: list[str] | None = None, kind: Kind = "exception") -> CrashReport:
    """A report of an exception (``sys.excepthook``'s and ``threading.excepthook``'s arguments)."""
    details = "".join(traceback.format_exception(exc_type, exc, tb))
    title = traceback.format_exception_only(exc_type, exc)[-1].strip()
    return CrashReport(kind, title, details, thread, user_frame(tb), facts=facts_lines(),
                       actions=list(actions or []))


def from_fault(dump: str, *, when: str = "", actions: list[str] | None = None,
               facts: list[str] | None = None) -> CrashReport:
    """A report of a previous run's ``faulthandler`` dump (``"Fatal Python error: Segmentation fault"`` first)."""
    first = next((x.strip() for x in dump.splitlines() if x.strip()), "the process ended")
    title = first.removeprefix("Fatal Python error:").strip() or first
    report = CrashReport("hard crash", title, dump, "", user_frame_in_fault(dump),
                         facts=list(facts) if facts else facts_lines("(previous run: not recorded)"),
                         actions=list(actions or []))
    if when:
        report.when = when
    return report
