# Every target creates the project's virtual environment on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
WORKERS ?= $(shell nproc)
ARG_FILE ?= args/train_humanoid3d_walk_args.txt

.PHONY: setup train skill test test-slow test-reference bench bench-core view clean data-extra

$(STAMP): requirements.txt requirements-bench.txt
	bash scripts/install_system_deps.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-bench.txt
	touch $(STAMP)

setup: $(STAMP)

# Train ARG_FILE (default: DeepMimic's walk recipe) with WORKERS MPI workers (default: one per CPU
# core) into output/; make train ARG_FILE=args/train_humanoid3d_walk_fast_args.txt: the fast recipe.
train: $(STAMP)
	$(PY) mpi_run.py --num_workers $(WORKERS) --arg_file $(ARG_FILE) $(ARGS)

# Train one clip of the library (CLIP=walk, backflip, crawl, ..., dog3d_canter: app/skill_recipes.py) or
# a user's humanoid3d clip (MOTION=file.txt or .bvh) with the project's recipe until it ships
# (data/policies/<character>_<clip>_trained/, played by args/run_<character>_<clip>_args.txt);
# rerun to go on after a stop.
CLIP ?= walk
skill: $(STAMP)
	$(PY) scripts/train_skill.py $(if $(MOTION),--motion $(MOTION),--clip $(CLIP)) --num_workers $(WORKERS) $(ARGS)

# DeepMimic's clips not shipped here (motions/sie CC BY-NC, motions/amass AMASS licence, motions/long
# 20 MB), from github.com/xbpeng/DeepMimic at a pinned commit, checked by hash.
data-extra: $(STAMP)
	$(PY) scripts/fetch_data_extra.py $(ARGS)

# Fast test suite (CI). Slow tests: make test-slow.
test: $(STAMP)
	$(PY) -m pytest -q -rs -m "not slow and not reference" $(ARGS)

test-slow: $(STAMP)
	$(PY) -m pytest -q -rs -m "slow and not reference" $(ARGS)

# Differential tests against DeepMimic's own C++ core (tests/reference_core/): builds the core from
# a DeepMimic checkout (cached in .cache/deepmimic_core/), runs the tests marked `reference`, then
# writes the figures to docs/bench/reference_core.json (also when a test fails; the target fails).
test-reference: $(STAMP)
	@if [ -z "$(DEEPMIMIC)" ]; then \
		echo "make test-reference needs a DeepMimic checkout (its C++ core is the reference):"; \
		echo "  git clone https://github.com/xbpeng/DeepMimic.git /path/to/DeepMimic"; \
		echo "  apt-get install libbullet-dev libeigen3-dev swig libglew-dev freeglut3-dev python3.11-dev g++ make patch"; \
		echo "  make test-reference DEEPMIMIC=/path/to/DeepMimic"; \
		exit 2; \
	fi
	bash tests/reference_core/build_core.sh "$(DEEPMIMIC)" $(PY) > /dev/null
	status=0; DEEPMIMIC="$(DEEPMIMIC)" $(PY) -m pytest -q -m reference tests/reference_core $(ARGS) || status=$$?; \
	$(PY) -m tests.reference_core.report --deepmimic "$(DEEPMIMIC)" --json docs/bench/reference_core.json || status=1; \
	exit $$status

# Throughput benchmark (also times the older port in the pybullet wheel, which needs tf-keras).
bench: $(STAMP)
	$(PY) -m tests.bench.throughput $(ARGS)

# Our env against DeepMimic's C++ core in DeepMimic_Optimizer's loop, interleaved rounds (run it on
# an idle machine): docs/bench/core_loop.json. Without DEEPMIMIC it says how to get the core.
bench-core: $(STAMP)
	DEEPMIMIC="$(DEEPMIMIC)" $(PY) -m tests.bench.core_loop $(ARGS)

view: $(STAMP)
	$(PY) DeepMimic.py --arg_file args/kin_char_args.txt $(ARGS)

clean:
	rm -rf output .pytest_cache
