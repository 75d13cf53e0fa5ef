"""``shared_parsing`` (app/core/models/gguf_parsing.py): one parse of a GGUF for every transformers reader of a
load, with the library's own result. The file is the tiny random Llama of test_gguf.py (written by gguf-py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from test_gguf import write_tiny_gguf

from app.core.models import gguf_parsing


@pytest.fixture(scope="module")
def tiny_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("parsing") / "tiny-llama.Q8_0.gguf"
    write_tiny_gguf(path, tmp_path_factory.mktemp("tok"))
    return str(path)


def _weights_checkpoint(path: str):
    """transformers' ``load_gguf_checkpoint(return_tensors=True)`` as ``from_pretrained`` calls it for the
    weights (``GgufHfQuantizer.get_state_dict``), into an empty model of the file's config."""
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    config = AutoConfig.from_pretrained(path.rsplit("/", 1)[0], gguf_file=path.rsplit("/", 1)[1])
    model = AutoModelForCausalLM.from_config(config)
    return hf_gguf.load_gguf_checkpoint(path, return_tensors=True, model_to_load=model, torch_dtype=torch.float32)


def test_the_plain_array_reader_reads_what_gguf_py_reads(tiny_file):
    """Every field (name, types, data indices, the bytes of every part) and tensor (name, type, shape, bytes)
    of the shared reader equals gguf-py's own reader's; only the array kind differs (no memmap)."""
    import gguf

    library = gguf.GGUFReader(tiny_file)
    with gguf_parsing.shared_parsing():
        shared = gguf.GGUFReader(tiny_file)
        assert gguf.GGUFReader(tiny_file) is shared
    assert type(library.data) is np.memmap and type(shared.data) is np.ndarray
    assert list(shared.fields) == list(library.fields)
    for name, field in library.fields.items():
        mine = shared.fields[name]
        assert (mine.offset, mine.types, mine.data) == (field.offset, field.types, field.data), name
        assert [(p.dtype, p.tobytes()) for p in mine.parts] == [(p.dtype, p.tobytes()) for p in field.parts], name
    assert shared.data_offset == library.data_offset and len(shared.tensors) == len(library.tensors) == 21
    for mine, theirs in zip(shared.tensors, library.tensors, strict=True):
        assert (mine.name, mine.tensor_type, mine.shape.tolist(), mine.n_bytes) == (
            theirs.name, theirs.tensor_type, theirs.shape.tolist(), theirs.n_bytes)
        assert type(mine.data) is np.ndarray and mine.data.tobytes() == theirs.data.tobytes()


def test_the_weights_call_reuses_the_values_parsed_for_the_config(tiny_file, monkeypatch):
    """Within the block the weights' ``load_gguf_checkpoint(return_tensors=True)`` parses no metadata value the
    config's call already parsed (the vocabulary and merges are most of a real file's values), and returns
    exactly what transformers returns outside the block: config, tokenizer and every tensor."""
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    expected = _weights_checkpoint(tiny_file)
    parsed: list[object] = []
    original = hf_gguf._gguf_parse_value

    def counting(value, data_type):
        parsed.append(value)
        return original(value, data_type)

    monkeypatch.setattr(hf_gguf, "_gguf_parse_value", counting)
    with gguf_parsing.shared_parsing():
        hf_gguf.load_gguf_checkpoint(tiny_file)
        after_config = len(parsed)
        got = _weights_checkpoint(tiny_file)
    assert after_config > 320  # the 320 token types and the scalars (strings: strings_decoded, without it)
    assert len(parsed) == after_config
    assert hf_gguf._gguf_parse_value is counting
    assert got["config"] == expected["config"] and got["tokenizer"] == expected["tokenizer"]
    assert got["tensors"].keys() == expected["tensors"].keys()
    for name, tensor in expected["tensors"].items():
        torch.testing.assert_close(got["tensors"][name], tensor, rtol=0, atol=0)


def test_strings_decoded_gives_the_librarys_value_for_every_part_of_the_file(tiny_file):
    """Every part of every field (the byte-level vocabulary's non-ASCII tokens, the merges, the chat template,
    the numbers) parses to what transformers' ``_gguf_parse_value`` gives; string parts without calling it."""
    import gguf
    from transformers.integrations.ggml import _gguf_parse_value

    passed_on: list[object] = []

    def library(value, data_type):
        passed_on.append(data_type)
        return _gguf_parse_value(value, data_type)

    parse = gguf_parsing.strings_decoded(library)
    reader = gguf.GGUFReader(tiny_file)
    n_strings = 0
    for field in reader.fields.values():
        for i in field.data:
            assert parse(field.parts[i], field.types) == _gguf_parse_value(field.parts[i], field.types), field.name
            n_strings += field.types[-1] == gguf.GGUFValueType.STRING
    assert n_strings > 320 and any("Ġ" in t for t in parse_all(reader, "tokenizer.ggml.tokens", parse))
    assert gguf.GGUFValueType.STRING not in [t for types in passed_on for t in types]


def parse_all(reader, key: str, parse) -> list:
    field = reader.fields[key]
    return [parse(field.parts[i], field.types) for i in field.data]


def test_parsed_once_tells_apart_parts_that_are_equal_but_not_the_same():
    """The memo is keyed by the objects themselves: an equal array parsed later is parsed again, and a part
    parsed under other types is too."""
    calls: list[tuple[int, str]] = []

    def parse(value, data_type):
        calls.append((int(value[0]), data_type))
        return int(value[0]) * 10

    parse_once = gguf_parsing.parsed_once(parse)
    a, b, types = np.array([1]), np.array([1]), ["u8"]
    assert [parse_once(a, types), parse_once(a, types), parse_once(b, types), parse_once(a, ["u16"])] == [10] * 4
    assert calls == [(1, ["u8"]), (1, ["u8"]), (1, ["u16"])]


def test_the_tensors_are_dequantized_ahead_on_a_background_thread_once_each(tiny_file, monkeypatch):
    """``dequantize_ahead`` (called by the conversion once the config is read) dequantizes the shared reader's
    tensors on the ``gguf-dequantize`` thread; transformers' tensor loop takes those results (gguf-py is called
    once per tensor, never on the loading thread here) and returns exactly the tensors it returns alone."""
    import threading
    import time

    import gguf

    expected = _weights_checkpoint(tiny_file)
    threads: list[str] = []
    original = gguf.dequantize

    def recording(data, qtype):
        threads.append(threading.current_thread().name)
        return original(data, qtype)

    monkeypatch.setattr(gguf, "dequantize", recording)
    assert not gguf_parsing.dequantize_ahead(tiny_file)  # outside a block: nothing to do
    with gguf_parsing.shared_parsing():
        assert not gguf_parsing.dequantize_ahead(tiny_file)  # no reader yet
        n_tensors = len(gguf.GGUFReader(tiny_file).tensors)
        assert gguf_parsing.dequantize_ahead(tiny_file)
        deadline = time.monotonic() + 60
        while len(threads) < n_tensors and time.monotonic() < deadline:  # a wait, not a timing assertion
            time.sleep(0.01)
        got = _weights_checkpoint(tiny_file)
    assert gguf.dequantize is recording
    assert len(threads) == n_tensors == 21 and all(name.startswith("gguf-dequantize") for name in threads), threads
    for name, tensor in expected["tensors"].items():
        torch.testing.assert_close(got["tensors"][name], tensor, rtol=0, atol=0)


def _fake_tensors(sizes: list[int]) -> list[SimpleNamespace]:
    return [SimpleNamespace(data=np.full(n, i, np.uint8), tensor_type="Q", n_elements=n) for i, n in enumerate(sizes)]


def test_dequantize_ahead_keeps_within_its_window_and_lets_the_loading_thread_take_over():
    """At most ``window_bytes`` of float32 results wait untaken (one tensor at least), and a tensor the thread has
    not begun is computed by the caller instead of waited for; each once, each the function's own result."""
    import threading

    gate, calls = threading.Event(), []

    def slow_first(data, qtype):
        calls.append((int(data[0]), threading.current_thread().name))
        if data[0] == 0:
            gate.wait(30)
        return data.astype(np.float32) * 2

    tensors = _fake_tensors([100, 10, 10, 10])  # 400 + 40 + 40 + 40 float32 bytes
    ahead = gguf_parsing.DequantizeAhead(slow_first, window_bytes=450)
    try:
        ahead.start(tensors)
        assert ahead._ahead == 440  # the first two fit the window, the third waits
        second = ahead.dequantize(tensors[1].data, "Q")  # queued behind the blocked first: computed here
        assert calls[-1] == (1, threading.current_thread().name)
        gate.set()
        results = [ahead.dequantize(t.data, "Q") for t in (tensors[0], tensors[2], tensors[3])]
        other = ahead.dequantize(np.full(3, 7, np.uint8), "Q")  # never queued: computed directly
    finally:
        ahead.close()
    assert sorted(i for i, _ in calls) == [0, 1, 2, 3, 7]  # each once
    for got, tensor in zip([results[0], second, *results[1:]], tensors, strict=True):
        np.testing.assert_array_equal(got, tensor.data.astype(np.float32) * 2)
    np.testing.assert_array_equal(other, np.full(3, 14, np.float32))
    assert calls[0][1].startswith("gguf-dequantize") and ahead._ahead == 0
