# Two commands do all set-up: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install demo test test-fast lint bench-quick dev clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench,speech]'
	$(BIN)/python -m glyphoxa_pipelines.db.portable_pgvector
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/glyphoxa demo

test: $(STAMP)
	$(BIN)/ruff check glyphoxa_pipelines realtime bench tests
	$(BIN)/python -m pytest -q

# The inner loop: everything but the tests marked slow (model loads, Dagster runs, servers).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check glyphoxa_pipelines realtime bench tests

dev: $(STAMP)
	$(BIN)/glyphoxa dev

clean:
	rm -rf $(VENV) .glyphoxa
