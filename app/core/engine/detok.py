"""Incremental detokenisation that never emits a broken UTF-8 character.

Byte-level BPE splits a multi-byte character (an emoji, a CJK character) across tokens; decoding the ids
seen so far then ends in U+FFFD. Following the prefix/read-offset scheme of vLLM and Hugging Face TGI, we
decode a short window twice — without and with the new tokens — and emit only the difference, and only
once it no longer ends in U+FFFD.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

_REPLACEMENT = "\ufffd"


class IncrementalDetokenizer:
    """Turns token ids, pushed one at a time, into text deltas.

    ``tokenizer`` is any Hugging Face tokenizer (``decode(ids, skip_special_tokens=...)``). Special tokens
    (EOS, BOS, padding) produce no text.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase) -> None:
        self._tok = tokenizer
        self.ids: list[int] = []
        self._prefix = 0
        self._read = 0

    def _decode(self, ids: list[int]) -> str:
        text = self._tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        assert isinstance(text, str)  # a list of ids decodes to one string
        return text

    def push(self, token_id: int) -> str:
        """Add one id; return the newly printable text (``""`` while a character is incomplete)."""
        self.ids.append(int(token_id))
        before = self._decode(self.ids[self._prefix : self._read])
        after = self._decode(self.ids[self._prefix :])
        if len(after) > len(before) and not after.endswith(_REPLACEMENT):
            self._prefix, self._read = self._read, len(self.ids)
            return after[len(before) :]
        return ""

    def flush(self) -> str:
        """Text still held back at the end of generation (may contain U+FFFD for a truly cut character)."""
        before = self._decode(self.ids[self._prefix : self._read])
        after = self._decode(self.ids[self._prefix :])
        self._prefix = self._read = len(self.ids)
        return after[len(before) :]
