"""Train the built-in model: a small Llama causal LM that writes English about code.

    python -m tools.train_builtin                       # about 25 minutes on 2 CPU cores
    python -m tools.train_builtin --steps 2000 --seed 0  # a fixed number of steps (reproducible)

Pipeline: build the pydoc corpus (:mod:`tools.pydoc_corpus`), train a byte-level BPE tokenizer on the
training documents, pack the documents into one token stream separated by ``<|endoftext|>``, train a
``LlamaForCausalLM`` with AdamW and a warmup + cosine learning-rate schedule (bf16 autocast on CPU, fp32
weights), measure the held-out loss in fp32, generate samples and write a standard Hugging Face folder:
``config.json``, ``model.safetensors``, ``generation_config.json``, ``tokenizer.json``,
``tokenizer_config.json``, ``README.md`` (model card) and ``train_log.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from tools.pydoc_corpus import Corpus, Document, build_corpus

EOT = "<|endoftext|>"
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "assets" / "models" / "pydoc-llama"
PROMPTS = ("The jit function", "This module provides", "Returns the")
MODEL_SHAPE = dict(hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=8,
                   num_key_value_heads=8, max_position_embeddings=512)
VOCAB_SIZE = 8192
SEQ_LEN = 256
EVAL_SEQ_LEN = 256


# ----------------------------------------------------------------------------------------- tokenizer
def train_tokenizer(docs: list[Document], vocab_size: int = VOCAB_SIZE):
    """Byte-level BPE (GPT-2 style) with ``<|endoftext|>`` as id 0, prepended to every encoded text."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=[EOT],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator((d.text for d in docs), trainer=trainer)
    # Documents start after <|endoftext|> in training, so prompts do too (the BOS token).
    tok.post_processor = processors.TemplateProcessing(
        single=f"{EOT} $A", pair=f"{EOT} $A {EOT} $B", special_tokens=[(EOT, tok.token_to_id(EOT))])
    return tok


def save_tokenizer(tok, out: Path, max_len: int) -> None:
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT, pad_token=EOT,
                                   model_max_length=max_len)
    fast.save_pretrained(out)
    cfg_path = out / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["tokenizer_class"] = "PreTrainedTokenizerFast"  # the portable name (transformers 4 and 5)
    cfg_path.write_text(json.dumps(cfg, indent=2) + "\n")


def token_stream(tok, docs: list[Document]) -> np.ndarray:
    """All documents as one uint16 stream: ``<eot> doc <eot> doc ...`` (each encoding starts with <eot>)."""
    ids = [e.ids for e in tok.encode_batch([d.text for d in docs])]
    return np.fromiter((i for seq in ids for i in seq), dtype=np.uint16)


def heldout_ids(tokenizer, docs: list[Document]) -> torch.Tensor:
    """The held-out stream through a ``transformers`` tokenizer (what tests and the model card use)."""
    ids: list[int] = []
    for doc in docs:
        ids.extend(tokenizer(doc.text, verbose=False)["input_ids"])
    return torch.tensor(ids, dtype=torch.long)


@torch.no_grad()
def heldout_loss(model, ids: torch.Tensor, seq_len: int = EVAL_SEQ_LEN, max_tokens: int | None = None,
                 batch_size: int = 8) -> float:
    """Mean next-token cross-entropy (nats) over non-overlapping ``seq_len`` windows of ``ids``, fp32.

    ``max_tokens`` bounds the evaluation to the first windows (the test uses a slice).
    """
    n = (len(ids) - 1) // seq_len
    if max_tokens is not None:
        n = min(n, max(1, max_tokens // seq_len))
    x = ids[: n * seq_len].view(n, seq_len)
    y = ids[1: n * seq_len + 1].view(n, seq_len)
    total, count = 0.0, 0
    model.eval()
    for i in range(0, n, batch_size):
        logits = model(input_ids=x[i:i + batch_size]).logits.float()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 y[i:i + batch_size].reshape(-1), reduction="sum")
        total += loss.item()
        count += y[i:i + batch_size].numel()
    return total / count


# ----------------------------------------------------------------------------------------- model
def make_model(vocab_size: int, seed: int, eot_id: int):
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab_size, tie_word_embeddings=True, bos_token_id=eot_id,
                         eos_token_id=eot_id, pad_token_id=eot_id, rms_norm_eps=1e-5, **MODEL_SHAPE)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(bos_token_id=eot_id, eos_token_id=eot_id, pad_token_id=eot_id,
                                               do_sample=False, max_new_tokens=64)
    return model


def lr_at(step: int, total: int, peak: float, warmup: int, floor: float = 0.1) -> float:
    """Linear warmup to ``peak`` over ``warmup`` steps, then cosine decay to ``floor * peak``."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


class Batches:
    """Random non-overlapping windows of the stream; a new offset and order every epoch (seeded)."""

    def __init__(self, stream: np.ndarray, seq_len: int, batch_size: int, seed: int):
        self.stream, self.seq_len, self.batch_size = stream, seq_len, batch_size
        self.rng = np.random.default_rng(seed)
        self.epoch, self.order = 0, np.empty(0, dtype=np.int64)

    def _new_epoch(self) -> None:
        offset = int(self.rng.integers(0, self.seq_len))
        starts = np.arange(offset, len(self.stream) - self.seq_len - 1, self.seq_len)
        self.order = np.concatenate([self.order, self.rng.permutation(starts)])
        self.epoch += 1

    def next(self) -> torch.Tensor:
        while len(self.order) < self.batch_size:
            self._new_epoch()
        starts, self.order = self.order[: self.batch_size], self.order[self.batch_size:]
        rows = [self.stream[s: s + self.seq_len + 1] for s in starts]
        return torch.from_numpy(np.stack(rows).astype(np.int64))


def train(model, batches: Batches, steps: int | None, minutes: float, peak_lr: float, warmup: int,
          log, eval_fn=None, eval_every: int = 500) -> dict:
    """Train in place. With ``steps=None`` the step count is fixed after ``warmup // 2`` timed steps so that
    the run takes about ``minutes``; the schedule only depends on the final count (reproducible with
    ``--steps``)."""
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=peak_lr, betas=(0.9, 0.95), eps=1e-8)
    total = steps if steps is not None else 10**9
    probe = max(10, warmup // 2)
    history, t0, step, ema = [], time.perf_counter(), 0, None
    model.train()
    while step < total:
        if steps is None and step == probe:
            per_step = (time.perf_counter() - t0) / probe
            total = max(warmup + 1, int(minutes * 60 / per_step))
            log(f"timed {probe} steps: {per_step:.3f} s/step -> {total} steps for {minutes} min")
        lr = lr_at(step, total, peak_lr, warmup)
        for group in opt.param_groups:
            group["lr"] = lr
        batch = batches.next()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(input_ids=batch[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                                                 batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if step % 50 == 0 or step == total:
            elapsed = time.perf_counter() - t0
            record = {"step": step, "train_loss_ema": round(ema, 4), "lr": lr, "epoch": batches.epoch,
                      "elapsed_s": round(elapsed, 1)}
            if eval_fn is not None and (step % eval_every == 0 or step == total):
                record["heldout_loss"] = round(eval_fn(), 4)
                model.train()
            history.append(record)
            log(json.dumps(record))
    return {"steps": total, "seconds": time.perf_counter() - t0, "history": history,
            "tokens": total * batches.batch_size * batches.seq_len, "epochs": batches.epoch}


# ----------------------------------------------------------------------------------------- samples
def generate(model, tokenizer, prompt: str, sample: bool, seed: int = 0, max_new_tokens: int = 40) -> str:
    """Greedy or sampled (temperature 0.8, top-k 40, seeded) continuation of ``prompt``, prompt excluded."""
    enc = tokenizer(prompt, return_tensors="pt")
    kwargs = dict(do_sample=True, temperature=0.8, top_k=40, top_p=1.0) if sample else dict(do_sample=False)
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=max_new_tokens, **kwargs)
    return tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)


# ----------------------------------------------------------------------------------------- model card
def folder_size(out: Path) -> int:
    return sum(p.stat().st_size for p in out.iterdir() if p.is_file())


def write_card(out: Path, info: dict) -> None:
    s = info["corpus"]
    rows = "\n".join(f"| {k} | {v:,} |" for k, v in s["per_source_chars"].items())
    samples = []
    for prompt, greedy, sampled in info["samples"]:
        samples.append(f"**{prompt}**\n\n- greedy: {prompt}{greedy}\n"
                       + "".join(f"- sampled (seed {i}): {prompt}{t}\n" for i, t in enumerate(sampled)))
    hist = info["train"]["history"]
    text = f"""---
language: en
library_name: transformers
pipeline_tag: text-generation
license: other
---

# pydoc-llama

The built-in model of torchax-playground: a {info['params'] / 1e6:.2f} M-parameter `LlamaForCausalLM`
trained from scratch, offline, on the English docstrings of the installed Python standard library,
numpy, jax, torch and transformers. It writes English-ish prose about code ("Returns the tensor of
...") and nothing else: it is a toy that exists so the app has a model to run without a download.

## Model

| | |
|---|---|
| architecture | Llama (standard `config.json`, no custom code), tied input/output embeddings |
| parameters | {info['params']:,} |
| layers / hidden / heads / MLP | {MODEL_SHAPE['num_hidden_layers']} / {MODEL_SHAPE['hidden_size']} / {MODEL_SHAPE['num_attention_heads']} / {MODEL_SHAPE['intermediate_size']} |
| context | {MODEL_SHAPE['max_position_embeddings']} positions (trained on {info['seq_len']}-token windows) |
| tokenizer | byte-level BPE, {info['vocab_size']:,} tokens, `<|endoftext|>` = id {info['eot_id']} is BOS, EOS and PAD; the tokenizer prepends it |
| weights | float32 safetensors |

## Corpus

Built by `tools/pydoc_corpus.py` from the `.py` files of the installed packages, read with `ast`
(nothing imported): module, class and function docstrings, string literals given to
`add_docstr`/`add_newdoc` (torch's and numpy's reference docs) and `pydoc_data/topics.py` (the language
reference shown by `help()`). Test, vendored and `testing` directories are skipped.

Cleaning: doctest blocks and their output, literal blocks after `::`, reST directives, section titles and
underlines, Google/numpy section headers and `name : type` lines, tables, URLs and code-looking lines
(code keywords and assignments, symbol density > 8 %) are dropped, and a sentence interrupted by code is
not spliced; reST roles, links, literals and emphasis are unwrapped; text is NFKC/ASCII-normalised and
whitespace collapsed; paragraphs under 8 words or under 75 % plain words are dropped.
Deduplication is global, in a fixed order: exact duplicates by normalised text
({s['paragraphs_exact_dup']:,} paragraphs) and near duplicates, paragraphs with at least half of their sampled
5-word shingles seen before ({s['paragraphs_near_dup']:,} paragraphs; transformers copies docstrings between models).

Held-out split: 5 % of documents (one document = one docstring), chosen by `md5(document id) % 100 < 5`.

| | |
|---|---|
| Python files read | {s['files']:,} |
| raw docstrings / characters | {s['raw_docstrings']:,} / {s['raw_chars']:,} |
| training documents / characters / words | {s['train_docs']:,} / {s['train_chars']:,} / {s['train_words']:,} |
| training tokens (incl. one `<|endoftext|>` per document) | {info['train_tokens']:,} |
| held-out documents / characters / tokens | {s['heldout_docs']:,} / {s['heldout_chars']:,} / {info['heldout_tokens']:,} |
| corpus sha256 (ids and texts, both splits) | `{s['sha256']}` |

Cleaned characters per source (both splits):

| source | characters |
|---|---|
{rows}

Package versions: {info['versions']}. The pins in `pyproject.toml` make the corpus reproducible; a
different Python patch release changes the standard-library part slightly (check the sha256).

## Training

{info['train']['steps']:,} steps of {info['batch_size']} x {info['seq_len']} tokens
({info['train']['tokens']:,} tokens, {info['train']['tokens'] / info['train_tokens']:.1f} epochs), AdamW
(betas 0.9/0.95, weight decay 0.1 on matrices), peak learning rate {info['lr']}, {info['warmup']} warmup steps
then cosine decay to 10 %, gradient clipping 1.0, bf16 autocast with fp32 weights, seed {info['seed']}.
Training took {info['train']['seconds'] / 60:.1f} minutes on {info['hardware']} (total run including corpus,
tokenizer and evaluation {info['total_seconds'] / 60:.1f} minutes). Final training loss (EMA)
{hist[-1]['train_loss_ema']:.3f}.

## Evaluation

Held-out loss (fp32, non-overlapping {EVAL_SEQ_LEN}-token windows over all {info['heldout_tokens']:,} held-out
tokens): **{info['heldout_loss']:.3f} nats/token, perplexity {math.exp(info['heldout_loss']):.1f}**.
On the first {info['test_slice_tokens']:,} tokens (the slice `tests/core/models/test_builtin_model.py` checks):
{info['heldout_loss_slice']:.3f} nats/token.

## Samples

Generated by `model.generate` with 40 new tokens; greedy, and sampled with temperature 0.8 and top-k 40
after `torch.manual_seed(seed)`. Unedited (tiny models loop under greedy decoding).

{chr(10).join(samples)}
## Reproduce

```
{info['command']}
```

The folder is `{out.name}/` ({folder_size(out) / 1e6:.1f} MB with this card); `train_log.json` holds the
loss curve and all figures above.
"""
    (out / "README.md").write_text(text)


# ----------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train the built-in pydoc-llama model (CPU, offline).")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    parser.add_argument("--minutes", type=float, default=25.0,
                        help="training time budget when --steps is not given (default 25)")
    parser.add_argument("--steps", type=int, default=None, help="exact number of optimizer steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default 1: on a busy 2-core machine 2 threads were slower)")
    parser.add_argument("--eval-every", type=int, default=500)
    args = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    t_start = time.perf_counter()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:7.1f}s] {msg}", flush=True)

    corpus: Corpus = build_corpus(workers=max(1, args.threads))
    log(f"corpus: {corpus.stats}")
    tok = train_tokenizer(corpus.train)
    save_tokenizer(tok, out, MODEL_SHAPE["max_position_embeddings"])
    eot_id = tok.token_to_id(EOT)
    stream = token_stream(tok, corpus.train)
    log(f"tokenizer: {tok.get_vocab_size()} tokens; training stream {len(stream):,} tokens")

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out)
    held = heldout_ids(tokenizer, corpus.heldout)
    model = make_model(tok.get_vocab_size(), args.seed, eot_id)
    params = sum(p.numel() for p in model.parameters())
    log(f"model: {params:,} parameters; held-out stream {len(held):,} tokens")

    batches = Batches(stream, SEQ_LEN, args.batch_size, args.seed)
    result = train(model, batches, args.steps, args.minutes, args.lr, args.warmup, log,
                   eval_fn=lambda: heldout_loss(model, held, max_tokens=32768), eval_every=args.eval_every)
    model.eval()
    model.save_pretrained(out, safe_serialization=True)

    loss = heldout_loss(model, held)
    slice_tokens = 16 * EVAL_SEQ_LEN
    loss_slice = heldout_loss(model, held, max_tokens=slice_tokens)
    log(f"held-out loss {loss:.4f} (ppl {math.exp(loss):.2f}); first {slice_tokens} tokens {loss_slice:.4f}")
    samples = []
    for prompt in PROMPTS:
        greedy = generate(model, tokenizer, prompt, sample=False)
        sampled = [generate(model, tokenizer, prompt, sample=True, seed=s) for s in range(2)]
        samples.append((prompt, greedy, sampled))
        log(f"{prompt!r}: greedy {greedy!r}; sampled {sampled!r}")

    import jax
    import tokenizers
    import transformers

    info = {
        "params": params, "vocab_size": tok.get_vocab_size(), "eot_id": eot_id, "seq_len": SEQ_LEN,
        "batch_size": args.batch_size, "lr": args.lr, "warmup": args.warmup, "seed": args.seed,
        "corpus": corpus.stats, "train_tokens": int(len(stream)), "heldout_tokens": int(len(held)),
        "train": result, "heldout_loss": loss, "heldout_loss_slice": loss_slice,
        "test_slice_tokens": slice_tokens, "samples": samples,
        "hardware": f"{args.threads} CPU thread{'s' if args.threads > 1 else ''} of a {os.cpu_count()}-core "
                    f"{platform.machine()} machine (torch {torch.__version__})",
        "versions": f"Python {platform.python_version()}, numpy {np.__version__}, jax {jax.__version__}, "
                    f"torch {torch.__version__}, transformers {transformers.__version__}, "
                    f"tokenizers {tokenizers.__version__}",
        "command": f"python -m tools.train_builtin --steps {result['steps']} --seed {args.seed} "
                   f"--threads {args.threads}",
    }
    info["total_seconds"] = time.perf_counter() - t_start
    (out / "train_log.json").write_text(json.dumps(info, indent=1) + "\n")
    write_card(out, info)
    log(f"wrote {out} ({folder_size(out) / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
