# make demo  — create .venv, install dlbkit, run the main job (simulated comparison + report in out/demo)
# make test  — create .venv, install dlbkit with test extras, check the import layers, run the fast tier
# make test-all — the same over every test, both tiers, hypothesis at full counts (what CI runs; it
#                 prints the 40 slowest tests, to keep the tier's time in view)
# make bench — run the benchmark scripts (figures go in BENCHMARKS.md by hand)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

# pytest-xdist: one test process per core; a module's tests that share an expensive fixture or a file
# are kept on one process by their xdist_group mark (--dist loadgroup). Tests marked `alone` measure a
# claim in real time, which a test running beside them would change: they run after, one at a time.
PYTEST := $(BIN)/pytest -n auto --dist loadgroup
ALONE  := $(BIN)/pytest -n 0

.PHONY: demo test test-all bench clean

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
	$(PYTEST) -q -m "not full and not alone" --hypothesis-profile=fast
	$(ALONE) -q -m "alone and not full" --hypothesis-profile=fast

test-all: $(VENV)/.installed
	$(BIN)/lint-imports --no-cache
	$(PYTEST) -q -m "(full or not full) and not alone" --hypothesis-profile=full --durations=40
	$(ALONE) -q -m "alone" --hypothesis-profile=full

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_m1.py

clean:
	rm -rf $(VENV) out build src/*.egg-info
