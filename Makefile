# `make run` and `make test` create .venv and install the project on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint format gradcheck bench loadbench loadtest demo-models clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/xt serve --demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

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
loadtest: $(STAMP)
	$(BIN)/python benchmarks/loadtest.py --clients 50 --seconds 45

# The shipped demo checkpoints, each one seeded command; the same command writes the same bits (sha256).
# induction: 4.5 minutes of CPU on one core (8000 steps of batch 32; 7-17 min wall on a shared machine);
# text: seconds (150 steps: more steps memorise the 30 training lines and the held-out loss rises).
demo-models: $(STAMP)
	$(BIN)/xt train --task induction --steps 8000 --batch 32 --lr 3e-3 --warmup 200 --decay cosine --seed 0 --out xt_core/checkpoints/induction.safetensors
	$(BIN)/xt train --task text --steps 150 --batch 32 --lr 1e-3 --decay cosine --weight-decay 0.1 --seed 0 --out xt_core/checkpoints/text.safetensors

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts
