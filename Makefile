# Every target creates the project's virtual environment on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup train test test-slow bench view clean

$(STAMP): requirements.txt requirements-bench.txt
	bash scripts/install_system_deps.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-bench.txt
	touch $(STAMP)

setup: $(STAMP)

# Train the walk skill with 2 MPI workers into output/.
train: $(STAMP)
	$(PY) mpi_run.py --num_workers 2 --arg_file args/train_humanoid3d_walk_args.txt $(ARGS)

# Fast test suite (CI). Slow tests: make test-slow.
test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" $(ARGS)

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow $(ARGS)

# Throughput benchmark (also times the older port in the pybullet wheel, which needs tf-keras).
bench: $(STAMP)
	$(PY) -m tests.bench.throughput $(ARGS)

view: $(STAMP)
	$(PY) DeepMimic.py --arg_file args/kin_char_args.txt $(ARGS)

clean:
	rm -rf output .pytest_cache
