# The drill: `make test` to work through the steps, `make check` to prove the repo (README).
PYTHON ?= python3
VENV   ?= .venv
# With a GPU and your own torch + triton, skip the local environment: make test PY=python3
PY     ?= $(VENV)/bin/python
SETUP  := $(if $(filter $(VENV)/bin/python,$(PY)),$(VENV)/.installed)
# STEP=T4.2 (or t4.2, 2): that step alone.  LESSON=T4: that lesson.  SEED=n: replay a run's inputs.
# ALL=1: every hint seen so far.
PICK   := $(if $(STEP),--step $(STEP)) $(if $(LESSON),--lesson $(LESSON)) $(if $(SEED),--seed $(SEED))

.PHONY: watch
.PHONY: help setup test grade hint reset upgrade check lint format bench tiles streamk groups smem l2sim loads clean
# In the learner's language, before any set-up (tools/learner/help.py).
help:
	@$(PYTHON) -m tools.learner.help $(VENV)

setup: $(SETUP)
# --no-compile: byte-compiling every module of torch at install was half of pip's time.  One import
# of what the course uses compiles those modules instead, once, even where PYTHONDONTWRITEBYTECODE is
# set (each of make check's processes would compile them again otherwise); the rest compile on first use.
$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --no-compile -r requirements.txt
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps -e .
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -c \
	  "import torch, triton, triton.language, triton.runtime.interpreter, numpy, pytest, pytest_timeout, matplotlib.pyplot"
	touch $@

# Each step runs in its own pytest process, so a crash or a hang costs one row (tools/learner/grade.py).
test: $(SETUP)
	@$(PY) -m tools.learner.grade --details $(PICK)
grade: $(SETUP)
	@$(PY) -m tools.learner.grade $(PICK)
# One warm process (torch and triton imported once) forks a child per save (tools/learner/watch.py).
watch: $(SETUP)
	@$(PY) -m tools.learner.watch $(PICK)
hint: $(SETUP)
	@$(PY) -m tools.learner.hint $(PICK) $(if $(ALL),--all)
reset:
	@$(PYTHON) -m tools.learner.reset
upgrade:
	@$(PYTHON) -m tools.learner.upgrade

check: $(SETUP)
	$(PY) -m tools.checks
# Lint and format are part of make check (tools/checks/lint.py); these run them alone.
lint: $(SETUP)
	$(PY) -m ruff check . && $(PY) -m ruff format --check .
format: $(SETUP)
	$(PY) -m ruff format . && $(PY) -m ruff check --fix .

# Refuse at once without a GPU, before any set-up: timing the interpreter means nothing.
bench:
	@command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || \
	  { $(PYTHON) -c 'from course.i18n import say; print(say(zh="make bench 需要 CUDA GPU（nvidia-smi 一块也没找到）；在 CPU 上用 make l2sim", en="make bench needs a CUDA GPU (nvidia-smi finds none); on the CPU use make l2sim"))'; exit 2; }
	@$(MAKE) --no-print-directory setup
	$(PY) -m tools.gpu.bench $(ARGS)

# Study tools: no GPU needed.  e.g. make tiles ARGS="4 4 2 --wave 4", make l2sim ARGS=--example
tiles: $(SETUP)
	$(PY) -m tools.study.tile_order $(ARGS)
streamk: $(SETUP)
	$(PY) -m tools.study.streamk $(ARGS)
groups: $(SETUP)
	$(PY) -m tools.study.groups $(ARGS)
smem: $(SETUP)
	$(PY) -m tools.study.smem $(ARGS)
l2sim: $(SETUP)
	$(PY) -m tools.study.l2sim $(ARGS)
loads: $(SETUP)
	$(PY) -m tools.study.loads $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +
