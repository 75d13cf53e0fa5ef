"""GUI responsiveness and throughput: does the event loop stall during a run, and is the GUI slower?

Measures, on the same model and settings:

1. GUI: a 5 ms QTimer on the GUI thread records the gaps between its ticks while the window runs the
   model (first run: with compiles; second run: warm). Reports the longest gap and the 99th percentile,
   and tokens/s as seen in the GUI (token arrivals) and as measured by the engine in the worker.
2. Direct: the engine on the main thread, no Qt (what the CLI does), same prompt and settings.

Usage: ``python bench/gui_responsiveness.py [--model NAME] [--tokens N] [--mode jit-static]``.
Runs offscreen unless ``DISPLAY`` is set and ``--onscreen`` is given.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.scratch import use_own_dirs  # noqa: E402

use_own_dirs()  # never the user's settings or caches

PROMPT = 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'


def parse_args() -> argparse.Namespace:
    from app.core.models.sources import DEFAULT_MODEL

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--mode", default="jit-static")
    p.add_argument("--onscreen", action="store_true", help="use the real display instead of offscreen")
    return p.parse_args()


def gui_bench(args: argparse.Namespace) -> list[dict]:
    from PySide6.QtCore import QEventLoop, QObject, QTimer, Slot
    from PySide6.QtWidgets import QApplication

    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    class Probe(QObject):
        """Records GUI-thread tick gaps and token arrival times (slots run on the GUI thread)."""

        def __init__(self) -> None:
            super().__init__()
            self.gaps: list[float] = []
            self.last = time.perf_counter()
            self.token_times: list[float] = []
            self.summary = None
            self.worst: tuple[float, str] = (0.0, "")
            self.phase = ""
            self.loop: QEventLoop | None = None

        @Slot()
        def tick(self) -> None:
            now = time.perf_counter()
            gap = (now - self.last) * 1000
            self.gaps.append(gap)
            if gap > self.worst[0]:
                self.worst = (gap, self.phase)
            self.last = now

        @Slot(object)
        def on_phase(self, event: object) -> None:
            self.phase = f"{event.phase}{'' if event.started else ' end'} {event.detail}"  # type: ignore[attr-defined]

        def on_ir(self, event: object) -> None:
            self.phase = f"IR {event.step}"  # type: ignore[attr-defined]

        def on_idle(self, _message: str) -> None:
            if self.loop is not None and self.summary is not None:
                self.loop.quit()

        def on_tokens(self, tokens: list) -> None:
            now = time.perf_counter()
            self.token_times.extend(now for _ in tokens)

        def on_finished(self, run: object) -> None:
            self.summary = run.finished.summary  # type: ignore[attr-defined]
            self.phase = "finished"

    from app.gui.main import configure_application

    app = QApplication.instance() or QApplication([])
    configure_application(app)  # the style, stylesheet and antialiased plots of the real app
    os.environ["TORCHAX_PLAYGROUND_CONFIG_DIR"] = tempfile.mkdtemp()
    settings = UserSettings(
        model=args.model, prompt=PROMPT, generation={"mode": args.mode, "max_new_tokens": args.tokens}
    )
    win = MainWindow(settings=settings)
    win.resize(1600, 980)
    if not os.environ.get("HIDE"):
        win.show()
    probe = Probe()
    events = win.session.events  # the session model's signals, delivered on the GUI thread
    events.tokens.connect(probe.on_tokens)
    events.runFinished.connect(probe.on_finished)
    events.phase.connect(probe.on_phase)
    events.ir.connect(probe.on_ir)
    events.idle.connect(probe.on_idle)
    timer = QTimer(interval=5)
    timer.timeout.connect(probe.tick)

    def wait(cond, timeout_s: float) -> None:
        end = time.perf_counter() + timeout_s
        while not cond() and time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.001)

    wait(lambda: win.loaded is not None or win.ui.details_button.isVisible(), 600)
    if win.loaded is None:
        raise SystemExit(f"could not load {args.model}: {win.ui.status_label.text()}")
    results = []
    # Baseline: the same timer with the window idle (the machine's own scheduling noise).
    probe.gaps.clear()
    probe.last = time.perf_counter()
    timer.start()
    idle = QEventLoop()
    QTimer.singleShot(2000, idle.quit)
    idle.exec()
    timer.stop()
    results.append(
        {
            "label": "idle (no run)",
            "max_gap_ms": max(probe.gaps),
            "p99_gap_ms": statistics.quantiles(probe.gaps, n=100)[98],
            "ticks": len(probe.gaps),
        }
    )
    for label in ("first run (compiles)", "second run (warm)"):
        probe.gaps.clear()
        probe.token_times.clear()
        probe.summary = None
        probe.last = time.perf_counter()
        probe.worst = (0.0, "")
        timer.start()
        probe.loop = QEventLoop()
        win.run()
        probe.loop.exec()  # the real event loop: QTimer ticks and worker signals interleave as in the app
        probe.loop = None
        timer.stop()
        app.processEvents()
        t = probe.token_times
        gui_tps = (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else float("nan")
        s = probe.summary
        results.append(
            {
                "label": label,
                "max_gap_ms": max(probe.gaps),
                "p99_gap_ms": statistics.quantiles(probe.gaps, n=100)[98]
                if len(probe.gaps) > 100
                else max(probe.gaps),
                "ticks": len(probe.gaps),
                "gui_decode_tps": gui_tps,
                "engine_decode_tps": s.decode_tokens_per_s,
                "engine_tps": s.overall_tokens_per_s,
                "ttft_ms": s.ttft_ms,
                "n_tokens": s.n_tokens,
                "n_compiles": s.n_compiles,
                "worst_during": probe.worst[1],
            }
        )
    win.close()
    return results


def direct_bench(args: argparse.Namespace) -> list[dict]:
    from app.core.engine.engine import load_engine
    from app.core.events import FinishedEvent, TokenEvent
    from app.core.settings import GenerationSettings

    engine = load_engine(args.model)
    settings = GenerationSettings(mode=args.mode, max_new_tokens=args.tokens)
    out = []
    for label in ("first run (compiles)", "second run (warm)"):
        times, summary = [], None
        for event in engine.generate(PROMPT, settings):
            if isinstance(event, TokenEvent):
                times.append(time.perf_counter())
            elif isinstance(event, FinishedEvent):
                summary = event.summary
        out.append(
            {
                "label": label,
                "decode_tps_arrivals": (len(times) - 1) / (times[-1] - times[0])
                if len(times) > 1
                else float("nan"),
                "engine_decode_tps": summary.decode_tokens_per_s,
                "engine_tps": summary.overall_tokens_per_s,
                "ttft_ms": summary.ttft_ms,
                "n_tokens": summary.n_tokens,
            }
        )
    return out


def main() -> None:
    args = parse_args()
    if os.environ.get("SWITCH"):
        sys.setswitchinterval(float(os.environ["SWITCH"]))
    if not (args.onscreen and os.environ.get("DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    print(f"model {args.model} · mode {args.mode} · {args.tokens} new tokens · {os.cpu_count()} CPUs")
    gui = gui_bench(args)
    direct = direct_bench(args)
    print("\nGUI (engine on the compute thread, 5 ms QTimer on the GUI thread)")
    base = gui.pop(0)
    print(
        f"  {base['label']:<22} max stall {base['max_gap_ms']:6.1f} ms · p99 {base['p99_gap_ms']:5.1f} ms "
        f"({base['ticks']} ticks)"
    )
    for r in gui:
        print(
            f"  {r['label']:<22} max stall {r['max_gap_ms']:6.1f} ms · p99 {r['p99_gap_ms']:5.1f} ms "
            f"({r['ticks']} ticks) · {r['n_tokens']} tokens, {r['n_compiles']} compiles · "
            f"TTFT {r['ttft_ms']:.0f} ms · decode {r['gui_decode_tps']:.1f} tok/s as seen by the GUI, "
            f"{r['engine_decode_tps'] or float('nan'):.1f} tok/s steady (engine) · "
            f"{r['engine_tps']:.1f} tok/s overall"
            f" · longest stall during: {r['worst_during']}"
        )
    print("\nDirect (engine on the main thread, no Qt: what the CLI does)")
    for r in direct:
        print(
            f"  {r['label']:<22} TTFT {r['ttft_ms']:.0f} ms · decode {r['decode_tps_arrivals']:.1f} tok/s "
            f"(arrivals), {r['engine_decode_tps'] or float('nan'):.1f} tok/s steady (engine) · "
            f"{r['engine_tps']:.1f} tok/s overall"
        )
    warm_gui, warm_direct = gui[-1], direct[-1]
    ratio = warm_gui["engine_tps"] / warm_direct["engine_tps"] if warm_direct["engine_tps"] else float("nan")
    print(f"\nwarm overall tokens/s, GUI / direct: {ratio:.2f}")
    stalls = max(r["max_gap_ms"] for r in gui)
    print(
        f"longest GUI stall during runs: {stalls:.1f} ms "
        f"({'OK' if stalls <= 100 else 'OVER'} the 100 ms budget)"
    )


if __name__ == "__main__":
    main()
