"""Build the English "pydoc" corpus from the docstrings of installed Python packages.

Every machine with the project installed has the same text: the Python standard library and the pinned
``numpy``, ``jax``, ``torch`` and ``transformers`` wheels. We read their ``.py`` files with :mod:`ast`
(nothing is imported) and collect

* module, class and function docstrings, and
* string literals passed to docstring-attaching calls (``torch._C._add_docstr``, ``numpy``'s
  ``add_newdoc``), where torch and numpy keep most of their reference documentation, and
* module-level dicts of long documentation strings: ``pydoc_data/topics.py``, the language reference
  that ``help()`` shows.

Cleaning keeps prose and drops code: doctest blocks (``>>>`` and their output), literal blocks after
``::``, reST directives, section underlines and headers, numpy parameter-type lines, tables, lines that
look like code (symbol density, code keywords), URLs; reST/Markdown roles and emphasis are unwrapped to
their text. Paragraphs shorter than 8 words or made mostly of identifiers are dropped, and the rest is
ASCII-normalised.

Deduplication is global and in a fixed order (sources in :data:`SOURCES` order, files sorted): a paragraph
is dropped if its normalised letters-and-digits key was seen before (exact duplicate) or if at least half
of its sampled 5-word shingles were seen before (near duplicate; transformers copies docstrings between
models). A document is one docstring; documents left empty are dropped.

The held-out split is by document: ``md5(document id) % 100 < 5``, so it does not depend on the order or
on a random seed.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import re
import sys
import sysconfig
import unicodedata
import warnings
from dataclasses import dataclass, field
from pathlib import Path

SOURCES = ("stdlib", "numpy", "jax", "torch", "transformers")
HELDOUT_PERCENT = 5

# Directories that hold tests, vendored code or generated data rather than documentation.
_SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "_vendor", "__pycache__",
              "ensurepip", "lib2to3", "turtledemo", "testing"}
_DOC_CALLS = ("add_docstr", "add_newdoc", "_add_docstr", "add_newdoc_ufunc", "_add_newdoc_ufunc")

_WORD_RE = re.compile(r"[a-z0-9]+")
_PLAIN_WORD_RE = re.compile(r"^[\"'(]?[A-Za-z][a-z]*(?:'[a-z]+)?[\"')]?[.,;:!?]?[\"')]?$")
_CODE_START = re.compile(
    r"^(?:import |from \S+ import |def |class |return\b|yield\b|raise \w|assert |print\(|@|#|\$ |%|"
    r"for \w+ in .*:$|if .*:$|while .*:$|with .*:$|try:|except\b|else:|elif |lambda\b|self\.|"
    r"[A-Za-z_][\w.]*\s*(?:=|\+=|-=)\s*\S|[A-Za-z_][\w.]*\(.*\)$|In \[\d+\]|Out\[\d+\])"
)
_SECTION_HEADER = re.compile(r"^[A-Z][A-Za-z ]{0,30}:$|^(?:Example|Examples|Note|Notes|Warning|Usage)s?::?$")
_NUMPY_PARAM = re.compile(r"^\*{0,2}[A-Za-z_][\w, *]*\s+:\s*\S")
_UNDERLINE = re.compile(r"^[-=~^\"'`#*+.:_ ]{3,}$")
_DIRECTIVE = re.compile(r"^\.\.\s+[\w:-]+::|^\.\.\s+_|^\.\.\s*$|^\.\.\s+\[|^\.\.\s+\|")
_URL = re.compile(r"https?://\S+|www\.\S+")
_ROLE = re.compile(r":[\w:.+-]+:`~?([^`<]*?)\s*(?:<[^`>]*>)?`")
_LINK = re.compile(r"`([^`<]+?)\s*<[^`>]*>`_{1,2}")
_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_DOUBLE_BT = re.compile(r"``(.+?)``")
_SINGLE_BT = re.compile(r"`([^`]+)`_{0,2}")
_EMPH = re.compile(r"(\*\*|\*)(?=\S)([^*]+?)(?<=\S)\1")
_SUBST = re.compile(r"\|([\w -]+)\|")
_PLACEHOLDER = re.compile(r"\{[\w.]*\}")
_SYMBOLS = set("[]{}=<>*/\\#@$%^&|~;+`")
_ASCII_MAP = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                            "\u2014": " - ", "\u2026": "...", "\u00a0": " ", "\u00d7": "x"})


@dataclass(frozen=True)
class Document:
    """One cleaned docstring. ``doc_id`` is ``source:relative/path.py:qualname[#n]``."""

    doc_id: str
    source: str
    text: str


@dataclass
class Corpus:
    """The cleaned, deduplicated corpus split into train and held-out documents, plus counts."""

    train: list[Document]
    heldout: list[Document]
    stats: dict = field(default_factory=dict)


def source_roots() -> list[tuple[str, Path]]:
    """Return ``(source name, directory)`` for every source, without importing the packages."""
    roots = [("stdlib", Path(sysconfig.get_paths()["stdlib"]))]
    for name in SOURCES[1:]:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError(f"package {name!r} is not installed; the corpus needs it")
        roots.append((name, Path(list(spec.submodule_search_locations)[0])))
    return roots


def iter_source_files(root: Path) -> list[Path]:
    """Sorted ``.py`` files under ``root``, skipping test and vendored directories."""
    files = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).parts
        if any(part in _SKIP_DIRS or part.startswith("config-") for part in rel[:-1]):
            continue
        if rel[-1].startswith("test_"):
            continue
        files.append(path)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _is_topic_dict(node: ast.Dict) -> bool:
    """A module-level dict of long documentation strings, like ``pydoc_data.topics.topics``."""
    return len(node.keys) >= 10 and all(
        isinstance(k, ast.Constant) and isinstance(k.value, str)
        and isinstance(v, ast.Constant) and isinstance(v.value, str) and len(v.value) >= 200
        for k, v in zip(node.keys, node.values)
    )


def extract_docstrings(source: str) -> list[tuple[str, str]]:
    """Return ``(qualname, raw docstring)`` pairs of one Python file, in source order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return []
    out: list[tuple[str, str]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        # Only statements can carry docstrings or docstring-attaching calls: do not walk expressions.
        for child in body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{child.name}"
                doc = ast.get_docstring(child, clean=False)
                if doc:
                    out.append((qual, doc))
                visit(child.body, qual + ".")
                continue
            value = getattr(child, "value", None)
            if isinstance(child, ast.Assign) and isinstance(value, ast.Dict) and _is_topic_dict(value):
                target = ast.unparse(child.targets[0])
                for key, val in zip(value.keys, value.values):
                    out.append((f"{prefix}{target}[{key.value!r}]", val.value))  # type: ignore[union-attr]
            elif isinstance(value, ast.Call) and _call_name(value.func) in _DOC_CALLS:
                for i, sub in enumerate(ast.walk(value)):
                    if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and len(sub.value) >= 80:
                        out.append((f"{prefix}<doc-call {child.lineno}.{i}>", sub.value))
            for name in ("body", "orelse", "finalbody"):
                sub_body = getattr(child, name, None)
                if isinstance(sub_body, list):
                    visit(sub_body, prefix)
            for handler in getattr(child, "handlers", ()):
                visit(handler.body, prefix)
            for case in getattr(child, "cases", ()):
                visit(case.body, prefix)

    module_doc = ast.get_docstring(tree, clean=False) if isinstance(tree, ast.Module) else None
    if module_doc:
        out.append(("<module>", module_doc))
    visit(tree.body, "")
    return out


def _dedent(text: str) -> list[str]:
    """``inspect.cleandoc`` without the import: strip the common indentation of lines after the first."""
    lines = text.expandtabs(4).split("\n")
    indents = [len(ln) - len(ln.lstrip()) for ln in lines[1:] if ln.strip()]
    margin = min(indents) if indents else 0
    return [lines[0].strip()] + [ln[margin:].rstrip() for ln in lines[1:]]


def _unmarkup(line: str) -> str:
    line = _URL.sub("", line)
    line = _ROLE.sub(lambda m: m.group(1).lstrip("~"), line)
    line = _LINK.sub(r"\1", line)
    line = _MD_LINK.sub(r"\1", line)
    line = _DOUBLE_BT.sub(r"\1", line)
    line = _SINGLE_BT.sub(r"\1", line)
    line = _EMPH.sub(r"\2", line)
    line = _SUBST.sub(r"\1", line)
    line = _PLACEHOLDER.sub("", line)
    return line


def _is_code_line(line: str) -> bool:
    if _CODE_START.match(line) or _UNDERLINE.match(line) or line.startswith(("+-", "|", "....")):
        return True
    n = len(line)
    symbols = sum(ch in _SYMBOLS for ch in line)
    letters = sum(ch.isalpha() or ch in " _" for ch in line)
    return symbols > 0.08 * n or letters < 0.7 * n or "==" in line or "->" in line


def _good_paragraph(text: str) -> bool:
    words = text.split()
    if len(words) < 8 or len(text) < 40:
        return False
    plain = sum(bool(_PLAIN_WORD_RE.match(w)) for w in words)
    return plain >= 0.75 * len(words)


def clean_docstring(raw: str) -> list[str]:
    """Turn one raw docstring into a list of clean prose paragraphs (maybe empty)."""
    text = unicodedata.normalize("NFKC", raw.translate(_ASCII_MAP))
    lines = _dedent(text)
    paragraphs: list[str] = []
    current: list[str] = []
    skip_indent: int | None = None  # inside a literal block / directive / doctest: skip deeper lines
    in_doctest = False
    after_code = False  # the previous line was code: skip until a new sentence starts

    def flush() -> None:
        if current:
            para = " ".join(" ".join(current).split())
            if para.isascii() and _good_paragraph(para):
                paragraphs.append(para)
            current.clear()

    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            in_doctest = after_code = False
            flush()
            continue
        if in_doctest:
            continue
        if skip_indent is not None:
            if indent > skip_indent:
                continue
            skip_indent = None
        if stripped.startswith((">>>", "... ")) or stripped == "...":
            in_doctest = True
            flush()
            continue
        if stripped.startswith("```"):
            flush()
            skip_indent = -1  # fenced code: handled by the code-line filter below until the fence closes
            continue
        if _DIRECTIVE.match(stripped) or stripped.endswith("::"):
            head = stripped[:-2].rstrip() if stripped.endswith("::") and not stripped.startswith("..") else ""
            if head and not _DIRECTIVE.match(stripped):
                current.append(_unmarkup(head) + ":")
            flush()
            skip_indent = indent
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if nxt and _UNDERLINE.match(nxt) and len(nxt) >= len(stripped) * 0.6:
            flush()  # numpy/reST section title; its underline is dropped as a code line
            continue
        if _SECTION_HEADER.match(stripped) or _NUMPY_PARAM.match(stripped):
            flush()
            continue
        clean = " ".join(_unmarkup(stripped).split())
        if not clean or _is_code_line(clean):
            # Keep what came before only if it ends a sentence; do not splice text around code.
            if current and current[-1][-1] in ".:!?":
                flush()
            current.clear()
            after_code = True
            continue
        if after_code and not (clean[0].isupper() or clean.startswith("- ")):
            continue  # the rest of a sentence interrupted by code
        after_code = False
        current.append(clean)
    flush()
    return paragraphs


def _fingerprint(words: list[str]) -> list[int]:
    """Sampled 5-word shingle hashes (about one in four is kept)."""
    out = []
    for i in range(max(1, len(words) - 4)):
        h = int.from_bytes(hashlib.blake2b(" ".join(words[i:i + 5]).encode(), digest_size=8).digest(), "little")
        if h % 4 == 0:
            out.append(h)
    return out


def _is_heldout(doc_id: str) -> bool:
    return int(hashlib.md5(doc_id.encode()).hexdigest(), 16) % 100 < HELDOUT_PERCENT


def _process_file(path: Path) -> list[tuple[str, int, list[str]]]:
    """Extract and clean the docstrings of one file: ``(qualname, raw length, clean paragraphs)``."""
    try:
        source = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    return [(qual, len(raw), clean_docstring(raw)) for qual, raw in extract_docstrings(source)]


def build_corpus(sources: tuple[str, ...] = SOURCES, max_files: int | None = None, workers: int = 1) -> Corpus:
    """Read, clean, deduplicate and split the corpus. Deterministic for a given set of installed files.

    ``workers > 1`` parses and cleans files in that many processes; the result is identical because
    deduplication and splitting stay sequential, in file order.
    """
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers) as pool:
            return _build(sources, max_files, pool)
    return _build(sources, max_files, None)


def _build(sources: tuple[str, ...], max_files: int | None, pool) -> Corpus:
    seen_exact: set[bytes] = set()
    seen_shingles: set[int] = set()
    train: list[Document] = []
    heldout: list[Document] = []
    stats = {"files": 0, "raw_docstrings": 0, "raw_chars": 0, "paragraphs_clean": 0,
             "paragraphs_exact_dup": 0, "paragraphs_near_dup": 0, "per_source_chars": {}}
    for name, root in source_roots():
        if name not in sources:
            continue
        files = iter_source_files(root)[:max_files]
        src_chars = 0
        stats["files"] += len(files)
        if pool is not None:
            results = pool.map(_process_file, files, chunksize=16)
        else:
            results = map(_process_file, files)
        for path, docs in zip(files, results):
            rel = path.relative_to(root).as_posix()
            counts: dict[str, int] = {}
            for qual, raw_len, paragraphs in docs:
                stats["raw_docstrings"] += 1
                stats["raw_chars"] += raw_len
                kept = []
                for para in paragraphs:
                    stats["paragraphs_clean"] += 1
                    words = _WORD_RE.findall(para.lower())
                    key = hashlib.blake2b(" ".join(words).encode(), digest_size=12).digest()
                    if key in seen_exact:
                        stats["paragraphs_exact_dup"] += 1
                        continue
                    seen_exact.add(key)
                    shingles = _fingerprint(words)
                    if len(shingles) >= 2 and sum(h in seen_shingles for h in shingles) * 2 >= len(shingles):
                        stats["paragraphs_near_dup"] += 1
                        continue
                    seen_shingles.update(shingles)
                    kept.append(para)
                if not kept:
                    continue
                n = counts.get(qual, 0)
                counts[qual] = n + 1
                doc_id = f"{name}:{rel}:{qual}" + (f"#{n}" if n else "")
                doc = Document(doc_id, name, "\n".join(kept))
                (heldout if _is_heldout(doc_id) else train).append(doc)
                src_chars += len(doc.text)
        stats["per_source_chars"][name] = src_chars
    stats["train_docs"], stats["heldout_docs"] = len(train), len(heldout)
    stats["train_chars"] = sum(len(d.text) for d in train)
    stats["heldout_chars"] = sum(len(d.text) for d in heldout)
    stats["train_words"] = sum(len(d.text.split()) for d in train)
    digest = hashlib.sha256()
    for d in train + heldout:
        digest.update(d.doc_id.encode() + b"\0" + d.text.encode() + b"\0")
    stats["sha256"] = digest.hexdigest()
    return Corpus(train, heldout, stats)


def corpus_words(docs: list[Document]) -> set[str]:
    """Lower-cased alphabetic words (apostrophes allowed) of ``docs``: the vocabulary used by the tests."""
    words: set[str] = set()
    for d in docs:
        words.update(re.findall(r"[a-z]+(?:'[a-z]+)?", d.text.lower()))
    return words


#: The fixed sample the built-in model's tests read (tests/core/models/test_builtin_model.py) instead of
#: rebuilding the corpus (35-75 s): the first held-out documents (at least 4,097 tokens of the built-in
#: tokenizer) and every training word. Rewrite it with ``--write-test-sample`` after a pin changes.
TEST_SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "pydoc_llama_sample.json"


def write_test_sample(corpus: Corpus, tokenizer, path: Path = TEST_SAMPLE, tokens: int = 4097) -> Path:
    """Write :data:`TEST_SAMPLE`: ``{"heldout": [text, ...], "train_words": [word, ...]}`` (sorted words)."""
    import json

    docs, count = [], 0
    for doc in corpus.heldout:
        if count >= tokens:
            break
        docs.append(doc.text)
        count += len(tokenizer(doc.text, verbose=False)["input_ids"])
    path.write_text(json.dumps({"heldout": docs, "train_words": sorted(corpus_words(corpus.train))}) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=5, help="print this many random training documents")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="processes that parse files")
    parser.add_argument("--write-test-sample", action="store_true",
                        help=f"write the tests' fixed sample ({TEST_SAMPLE.name}) and stop")
    args = parser.parse_args(argv)
    import random
    import time

    t0 = time.perf_counter()
    corpus = build_corpus(workers=args.workers)
    print(f"built in {time.perf_counter() - t0:.1f} s")
    if args.write_test_sample:
        from transformers import AutoTokenizer

        model_dir = Path(__file__).resolve().parents[1] / "assets" / "models" / "pydoc-llama"
        print(f"wrote {write_test_sample(corpus, AutoTokenizer.from_pretrained(model_dir))}")
        return 0
    for key, value in corpus.stats.items():
        print(f"{key}: {value}")
    rng = random.Random(args.seed)
    for doc in rng.sample(corpus.train, min(args.samples, len(corpus.train))):
        print(f"\n--- {doc.doc_id}\n{doc.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
