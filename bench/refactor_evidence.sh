#!/bin/bash
# The evidence of bench/RESULTS.md §14: refactoring tasks on three PyPI projects; the gold patch,
# the empty patch and two attacks (bench/refactor_redteam.py) verified for every task.
#   bench/refactor_evidence.sh [OUT_DIR]    (about 10 minutes on 2 cores; needs the package index)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/out/refactor}
mkdir -p "$out"
py=${PY:-.venv/bin/python}
ref="$py -m referee"
for spec in toolz==1.2.0 cachetools==8.0.2 sqlparse==0.6.1; do
  n=${spec%%==*}
  $ref synth "pypi:$spec" --kinds refactor --out "$out/$n.jsonl" --json > "$out/$n.report.json"
  $py bench/refactor_redteam.py "$out/$n.jsonl" "$out/$n"
  $ref tasks gold "$out/$n.jsonl" > "$out/$n.gold.jsonl"
  mv "$out/$n.gold.jsonl" "$out/$n/gold.jsonl"
  for kind in gold empty stub unused; do
    $ref verify --tasks "$out/$n.jsonl" --samples "$out/$n/$kind.jsonl" --json \
      > "$out/$n/$kind.verdicts.jsonl" 2> "$out/$n/$kind.summary" || true
    echo "$n $kind: $(tail -1 "$out/$n/$kind.summary")"
  done
done
