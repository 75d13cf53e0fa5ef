"""The garbage collector's settle after each model load, cheaper in the suite (issue 53).

The app settles the collector after a model load (``app.core.session.compute.service.settle_garbage_collector``):
``gc.unfreeze()``, a full collection of every object the process holds, ``gc.freeze()`` — so the previous model's
cyclic garbage is freed and later full collections skip what is alive. In the app that is one window's loads; in a
pytest worker that has built a hundred windows it scans 600,000+ objects each time: 0.53 s a window, 24.7 s of the
221 s tests/gui/demo and tests/gui/window took (7 Dec, a quiet machine), 11 % of the window tests' time.

In the suite a settle collects only what is not frozen yet (what the new window and model made) and freezes
it, and every :data:`FULL_EVERY` settles it does the app's whole settle, so the closed windows' frozen garbage is
freed at that pace and the workers' memory stays bounded. No test asserts the collector's state; one that would
calls the app's own settle, kept as :data:`APP_SETTLE` (the module's name now points here, in the test process
only: the processes a test starts settle as the app does).
"""

from __future__ import annotations

import gc

#: One settle in this many is the app's whole settle (unfreeze, full collection, freeze).
FULL_EVERY = 8
_count = [0]
#: The app's own settle (``app.core.session.compute.service.settle_garbage_collector``), set by :func:`install`.
APP_SETTLE = None


def settle_in_the_suite() -> None:
    """Collect what is not frozen and freeze what is alive; every :data:`FULL_EVERY` calls, the app's settle."""
    _count[0] += 1
    if _count[0] % FULL_EVERY == 0:
        gc.unfreeze()
    gc.collect()
    gc.freeze()


def install() -> None:
    """Point the compute service (and the window's worker, if imported already: it imports the name from the
    service) at :func:`settle_in_the_suite`, in this process."""
    import sys

    from app.core.session.compute import service

    global APP_SETTLE
    APP_SETTLE = APP_SETTLE or service.settle_garbage_collector
    service.settle_garbage_collector = settle_in_the_suite
    if "app.gui.worker" in sys.modules:
        sys.modules["app.gui.worker"].settle_garbage_collector = settle_in_the_suite  # type: ignore[attr-defined]
