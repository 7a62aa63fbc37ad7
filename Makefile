# make demo  — create .venv, install dlbkit, run the main job (simulated comparison + report in out/demo)
# make test  — create .venv, install dlbkit with test extras, check the import layers, run the test suite
# make bench — run the benchmark scripts (figures go in BENCHMARKS.md by hand)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/pip install -q -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/dlbkit simulate demo --out out/demo --jobs 2

test: $(VENV)/.installed
	$(BIN)/lint-imports --no-cache
	$(BIN)/pytest -q

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_m1.py

clean:
	rm -rf $(VENV) out build src/*.egg-info
