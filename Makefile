# Lesson T4 drill: `make test` to work through the steps, `make check` to prove the repo (README).
PYTHON ?= python3
VENV   ?= .venv
# With a GPU and your own torch + triton, skip the local environment: make test PY=python3
PY     ?= $(VENV)/bin/python
STEP   ?=
SETUP  := $(if $(filter $(VENV)/bin/python,$(PY)),$(VENV)/.installed)
# STEP=T4.2 (or t4.2, 2): that step alone (its pytest marker, t4_2).  ALL=1: every hint seen so far.
ONE    := $(if $(STEP),--step $(STEP))

.PHONY: help setup test grade hint reset check bench tiles smem l2sim clean
help:
	@echo "make test [STEP=T4.2]   grade mine/t4_matmul.py: the first failure, then the scorecard (SOLUTION=1: solutions/)"
	@echo "make grade [STEP=T4.2]  the scorecard alone: which steps pass, what to read next"
	@echo "make hint [STEP=T4.2]   the next hint for a step (ALL=1: every hint seen so far)"
	@echo "make reset              the stub again; your file is kept in mine/backups/ first"
	@echo "make check              the repo's invariants: what CI runs"
	@echo "make bench [ARGS=...]   GPU only: TFLOP/s against torch.matmul (tools/bench.py --help)"
	@echo "make tiles [ARGS=...]   which pid computes each tile, your tile_coords (tools/tile_order.py --help)"
	@echo "make smem [ARGS=...]    shared memory per autotune config, and the GPUs it fits (tools/smem.py --help)"
	@echo "make l2sim [ARGS=...]   DRAM bytes in row-major vs grouped order, an L2 model (tools/l2sim.py --help)"
	@echo "make setup              create $(VENV) with the pinned versions (done on first use)"

setup: $(SETUP)
$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

# Each step runs in its own pytest process, so a crash or a hang costs one row (tools/grade.py).
test: $(SETUP)
	@$(PY) tools/grade.py --details $(ONE)
grade: $(SETUP)
	@$(PY) tools/grade.py $(ONE)
hint: $(SETUP)
	@$(PY) tools/hint.py $(ONE) $(if $(ALL),--all)
reset:
	@$(PYTHON) tools/reset.py

check: $(SETUP)
	$(PY) tools/check.py

# Refuse at once without a GPU, before any set-up: timing the interpreter means nothing.
bench:
	@command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || \
	  { echo "make bench needs a CUDA GPU (nvidia-smi finds none); on the CPU use tools/l2sim.py"; exit 2; }
	@$(MAKE) --no-print-directory setup
	$(PY) tools/bench.py $(ARGS)

# Study tools: no GPU needed.  e.g. make tiles ARGS="4 4 2 --wave 4", make l2sim ARGS=--example
tiles: $(SETUP)
	$(PY) tools/tile_order.py $(ARGS)
smem: $(SETUP)
	$(PY) tools/smem.py $(ARGS)
l2sim: $(SETUP)
	$(PY) tools/l2sim.py $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
