"""A GGUF conversion's progress lines: how many items are done and, once a tenth has run, about how long is left;
a progress bar that knows no total (transformers' ``EmptyTqdm`` when bars are off answers every attribute with a
function) still reports, without an estimate."""

from __future__ import annotations

from app.core.models.gguf import _reporting, _time_left


class _Bar(list):
    total = 10


class _EmptyBar(list):
    def __getattr__(self, name):
        return lambda *a, **k: None


def test_time_left_from_the_rate_so_far():
    assert _time_left(5, 10, 10.0) == " · about 10 s left"
    assert _time_left(0, 10, 1.0) == "" and _time_left(10, 10, 5.0) == ""
    assert _time_left(3, None, 1.0) == ""


def test_reporting_with_and_without_a_total():
    lines: list[str] = []
    assert list(_reporting(_Bar(range(10)), "dequantizing", " tensors", lines.append, 0.0)) == list(range(10))
    assert lines[0].startswith("dequantizing 1/10 tensors") and lines[-1].startswith("dequantizing 10/10 tensors")
    lines.clear()
    assert list(_reporting(_EmptyBar(range(3)), "loading weights", "", lines.append, 0.0)) == [0, 1, 2]
    assert lines and lines[0].startswith("loading weights 1/?") and "left" not in lines[0]
