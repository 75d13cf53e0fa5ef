"""Shared fixtures: headless Qt, an offline config dir, and tiny Hugging Face models written to disk.

Every model here is built from a small config with random weights and saved with ``save_pretrained``, so
the engine loads it through the real ``from_pretrained`` path with no network.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

# The user's own settings and caches are never read or written by a test (nor by the windows, CLI processes
# and children the tests start: they inherit this environment): one scratch root for the whole run, with the
# app's config and cache folders and the XDG folders under it (platformdirs, Hugging Face's cache).
# Tests that import this module by name (`from tests.conftest import ...`) run it a second time: the same
# scratch root then, so the folders (and the suite's compile cache under it) stay the same for the whole run.
# Under pytest-xdist (`make test` runs two workers) the workers inherit the controller's root: each has its own
# folders under it (its own settings, model-conversion cache, XDG folders) and all share one compile cache.
RUN_SCRATCH = os.environ.get("TORCHAX_PLAYGROUND_TEST_SCRATCH") or tempfile.mkdtemp(prefix="torchax-playground-tests-")
os.environ["TORCHAX_PLAYGROUND_TEST_SCRATCH"] = RUN_SCRATCH
# The suite's compile cache (the run's own unless TORCHAX_PLAYGROUND_TEST_COMPILE_CACHE names a folder:
# tests/compile_sharing.py cache_root) and the file-time history that orders the files (tests/suite_budget.py
# history_file: beside the user's cache home) are resolved here, before XDG_CACHE_HOME points at the scratch
# root, and passed on to xdist workers and children.
from tests import compile_sharing, suite_budget, suite_gc  # noqa: E402

os.environ[compile_sharing.CACHE_ENV] = str(compile_sharing.cache_root(RUN_SCRATCH))
os.environ[suite_budget.HISTORY_ENV] = str(suite_budget.history_file())
SCRATCH_HOME = os.path.join(RUN_SCRATCH, os.environ.get("PYTEST_XDIST_WORKER", "main"))
os.makedirs(SCRATCH_HOME, exist_ok=True)
for _var, _sub in (("TORCHAX_PLAYGROUND_CONFIG_DIR", "config/torchax-playground"),
                   ("TORCHAX_PLAYGROUND_CACHE_DIR", "cache/torchax-playground"),
                   ("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"), ("XDG_DATA_HOME", "data"),
                   ("XDG_STATE_HOME", "state")):
    os.environ[_var] = os.path.join(SCRATCH_HOME, _sub)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Four simulated CPU devices for the mesh tests; must be set before JAX starts. Single-device runs use
# device 0 as before.
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()

# Compile once per suite: the suite's own persistent compilation caches under the scratch root, for this
# process and the ones it starts (tests/compile_sharing.py; a test about a cold compile opts out with
# @pytest.mark.cold_compile). Set here, before JAX is imported.
compile_sharing.configure_environment(RUN_SCRATCH)

import pytest  # noqa: E402

pytest_plugins = ["tests.suite_budget_plugin"]

warnings.filterwarnings("ignore", category=FutureWarning)

def pytest_configure(config):  # noqa: ANN001
    compile_sharing.install()
    suite_gc.install()  # a cheaper settle of the garbage collector after each model load (tests/suite_gc.py)


@pytest.fixture(autouse=True)
def _compile_once_per_suite(request, monkeypatch):
    """The suite's shared compilation caches underneath every test; none for a ``cold_compile`` test."""
    compile_sharing.begin_test(request.node.get_closest_marker("cold_compile") is not None, monkeypatch,
                               request.node.nodeid)
    yield
    compile_sharing.end_test()


CORPUS = [
    "The jit function traces a Python function into a jaxpr and compiles it with XLA.",
    "Returns the array of values along the given axis, with the same shape as the input.",
    "This module provides the attention layers, the cache and the decoding loop.",
    "Unicode text such as café, naïve, 日本語 and emoji 🎉🚀 must stream intact.",
] * 4

# Small configs, one per architecture family the engine promises (issue #2). Vocab 320 fits the tokenizer.
ARCH_CONFIGS = {
    "llama": dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256),
    "gpt2": dict(model_type="gpt2", n_embd=64, n_layer=2, n_head=4, n_positions=256),
    "qwen2": dict(model_type="qwen2", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256),
    "mistral": dict(model_type="mistral", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                    sliding_window=8),
    "gemma2": dict(model_type="gemma2", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=256,
                   sliding_window=8),
    "opt": dict(model_type="opt", hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=256, word_embed_proj_dim=64),
    "phi3": dict(model_type="phi3", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                 pad_token_id=0),
}


def build_tokenizer(path):
    """A byte-level BPE tokenizer (vocab 320) trained on CORPUS, saved as a HF fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    fast.save_pretrained(path)
    return fast


def build_model_dir(path, arch: str, seed: int = 0, **overrides):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    tok = build_tokenizer(path)
    kwargs = {**ARCH_CONFIGS[arch], **overrides}
    model_type = kwargs.pop("model_type")
    eos = tok.eos_token_id
    config = AutoConfig.for_model(model_type, vocab_size=320, bos_token_id=eos, eos_token_id=eos, **kwargs)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config).eval()
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory):
    """``model_dirs(arch)`` → path of a saved tiny model of that architecture (built once per session)."""
    cache = {}

    def get(arch: str = "llama"):
        if arch not in cache:
            cache[arch] = build_model_dir(tmp_path_factory.mktemp(f"model-{arch}"), arch)
        return str(cache[arch])

    return get


@pytest.fixture(scope="session")
def llama_engine(model_dirs):
    """A loaded engine on the tiny Llama, shared by tests (compiled steps persist across them)."""
    from app.core.engine.engine import load_engine

    return load_engine(model_dirs("llama"))


# -- GUI fixtures ---------------------------------------------------------------------------------------
LOAD_TIMEOUT_MS = 180_000
RUN_TIMEOUT_MS = 240_000
PROMPT = "The jit function"


@pytest.fixture(scope="module")
def engines(model_dirs):
    """``engines(arch)``: one loaded engine per architecture of :data:`ARCH_CONFIGS`, kept for the module."""
    from app.core.engine.engine import load_engine

    cache = {}

    def get(arch: str):
        if arch not in cache:
            cache[arch] = load_engine(model_dirs(arch))
        return cache[arch]

    return get


@pytest.fixture(autouse=True)
def no_thread_or_timer_left(request):
    """Fail a test that leaves a compute thread or a QTimer running once its widgets are closed and deleted
    (napari's conftest does the same); stop them first, so nothing aborts the process."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    from PySide6.QtCore import QCoreApplication, QEvent, QTimer

    started: list[Any] = []
    original = QTimer.start

    def start(timer, *args):  # noqa: ANN001
        started.append(timer)
        return original(timer, *args)

    QTimer.start = start
    try:
        yield
    finally:
        QTimer.start = original
    from app.gui.worker import ComputeThread

    threads = [c for c in ComputeThread.live() if c.qthread.isRunning()]
    for c in threads:
        c.shutdown()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
    timers = [t for t in started if _alive_and_active(t)]
    for t in timers:
        t.stop()
    if threads or timers:
        pytest.fail(f"left running: {len(threads)} compute thread(s), {len(timers)} QTimer(s)")


def _alive_and_active(timer: Any) -> bool:
    try:
        return timer.isActive()
    except RuntimeError:  # the C++ object was deleted with its widget
        return False


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    """Point the GUI's settings file at a temp dir."""
    monkeypatch.setenv("TORCHAX_PLAYGROUND_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def no_dialogs(monkeypatch):
    """Patch QMessageBox / QFileDialog so nothing modal blocks; returns the list of message boxes shown."""
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    shown: list[Any] = []

    def fake_exec(box):  # noqa: ANN001
        shown.append((box.text(), box.detailedText()))
        return int(QMessageBox.StandardButton.Close)

    monkeypatch.setattr(QMessageBox, "exec", fake_exec)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: ""))
    return shown


@pytest.fixture(scope="session")
def gui_model(model_dirs):
    """The model of the window tests: the small built-in ``pydoc-llama`` (fast to load and compile)."""
    from app.core.models.sources import MODELS_DIR

    if (MODELS_DIR / "pydoc-llama" / "config.json").exists():
        return "pydoc-llama"
    return model_dirs("llama")


@pytest.fixture(autouse=True)
def _collect_qt_garbage_on_the_gui_thread(request):
    """After a Qt test (and pytest-qt's own teardown, which closes its widgets), collect cyclic garbage here,
    on the GUI thread. Otherwise a closed window's widgets could be collected later by whichever thread
    collects next — the next window's compute thread settles the collector after a model load
    (``app.core.session.compute.service.settle_garbage_collector``) — and a QWidget destroyed off the GUI thread
    crashes the process."""
    font = _app_font() if "qtbot" in request.fixturenames else None
    yield
    if "qtbot" in request.fixturenames:
        import gc

        gc.collect()
        _put_app_font_back(font)


def _app_font():  # noqa: ANN202 - a QFont, or None before the QApplication exists
    import sys

    if "PySide6.QtWidgets" not in sys.modules:
        return None
    from PySide6.QtWidgets import QApplication

    return QApplication.font() if QApplication.instance() is not None else None


def _put_app_font_back(font) -> None:  # noqa: ANN001
    """A test that leaves the application's font changed (presentation mode left on, a font test interrupted)
    would change every later test's text metrics on that worker: the plot's legend and key rows, and with them
    its drawing area. (None did in tests/gui/demo and the layout tests on 6 Dec; this keeps it so.)"""
    from PySide6.QtWidgets import QApplication

    if font is not None and QApplication.instance() is not None and QApplication.font() != font:
        QApplication.setFont(font)


@pytest.fixture
def make_window(qtbot, config_dir, no_dialogs):
    """``make_window(model, tokens=8, autoload=True)`` → a shown MainWindow, its model loaded and its devices
    listed (when ``autoload``); closed at teardown."""
    from app.gui.user_settings import UserSettings
    from app.gui.window import MainWindow

    def make(model: str, tokens: int = 8, autoload: bool = True, size: tuple[int, int] = (1400, 900)):
        win = MainWindow(
            settings=UserSettings(model=model, prompt=PROMPT, generation={"max_new_tokens": tokens}),
            autoload=autoload,
        )
        qtbot.addWidget(win)
        win.resize(*size)
        win.show()
        if autoload:
            qtbot.waitUntil(lambda: win.loaded is not None and not win.is_busy(), timeout=LOAD_TIMEOUT_MS)
            qtbot.waitUntil(lambda: win.ui.device_panel.device_count() > 0, timeout=LOAD_TIMEOUT_MS)
        return win

    return make


@pytest.fixture
def window(request, make_window, gui_model):
    """The window on :func:`gui_model`; a test module sets ``WINDOW_TOKENS`` for another max_new_tokens."""
    win = make_window(gui_model, tokens=getattr(request.module, "WINDOW_TOKENS", 8))
    yield win
    win.close()


def run_and_wait(qtbot, win) -> None:
    """Click Run and wait until the run (and the hidden IR tabs' texts) are done."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton

    button = win.findChild(QPushButton, "runButton")
    runs_before = len(win.session.runs)
    for _attempt in range(3):  # a click that started nothing (seen once in CI, not reproduced) is clicked again
        qtbot.waitUntil(lambda: button.isEnabled() and button.isVisible(), timeout=10_000)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        try:
            qtbot.waitUntil(lambda: win.is_busy() or len(win.session.runs) > runs_before, timeout=3000)
            break
        except Exception:  # noqa: BLE001 - pytestqt's TimeoutError: try the click again
            continue
    else:
        raise AssertionError(f"Run started nothing: status {win.status.text()!r}")
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not win.ui.ir_tabs.pending(), timeout=5000)


# -- a real X11 screen (Xvfb) for the journeys and the first-paint tests ------------------------------------
@pytest.fixture
def x_display(request):
    """An Xvfb screen of ``request.param`` (width, height); yields its DISPLAY string."""
    width, height = request.param
    from tests.journeys.walk import free_display

    n = free_display()
    server = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    yield f":{n}"
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture
def app_look(qapp):
    """The look users get (Fusion, pyqtgraph colours, assets/style.qss), put back after the test."""
    from app.gui.main import configure_application

    sheet, style = qapp.styleSheet(), qapp.style().name()
    configure_application(qapp)
    yield qapp
    qapp.setStyleSheet(sheet)
    qapp.setStyle(style)


def run_on_screen(tmp_path: Path, screen: tuple[int, int], script: str, *args: str) -> dict:
    """Run ``script`` (Python source that prints one JSON line last) in its own process on Qt's offscreen platform
    with one screen of ``screen`` px (Qt reads it from a config file), the built-in model offline; its JSON."""
    import json
    import sys

    config = tmp_path / f"screen-{screen[0]}x{screen[1]}.json"
    config.write_text(json.dumps({"synchronousWindowSystemEvents": False, "windowFrameMargins": False, "screens": [
        {"name": "s", "x": 0, "y": 0, "width": screen[0], "height": screen[1], "logicalDpi": 96,
         "logicalBaseDpi": 96, "dpr": 1}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", script, *args], cwd=Path(__file__).resolve().parents[1], env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
