# The two entry points of the README: `make demo` and `make test`.
# Both create (or refresh, when pyproject.toml changes) a local virtual environment first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lit pytest docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(STAMP)
	$(BIN)/ipu-demo

test: lit pytest

lit: $(STAMP)
	$(BIN)/lit -sv test/lit

pytest: $(STAMP)
	$(BIN)/pytest -q

docs: $(STAMP)
	$(BIN)/ipu-dialect-doc -o docs/dialect.md

clean:
	rm -rf $(VENV) build *.egg-info
