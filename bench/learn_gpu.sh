#!/usr/bin/env bash
# The bench-learn recipe on a GPU machine, as one prepared run of at most 10 minutes: the model
# on CUDA (bfloat16 where the GPU supports it), larger groups and more tasks per step, a short
# GRPO budget. Run from the repository root with the venv built (make bootstrap) and the
# model's package installed (scripts/bootstrap-contracts.sh). Results: bench/results/learn-gpu/.
set -euo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-bench/results/learn-gpu} DEVICE=cuda BUDGET=${BUDGET:-3} GROUP=16 PROMPTS=8
export SAMPLES=${SAMPLES:-8} LAYERS=${LAYERS:-30} THREADS=${THREADS:-8}
exec bench/learn.sh
