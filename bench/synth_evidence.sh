#!/bin/bash
# The evidence of bench/RESULTS.md §5: synthesis on three PyPI projects, gold and empty patches
# verified for every task, the split checked, and the cost against the naive way.
#   bench/synth_evidence.sh [OUT_DIR]      (about 25 minutes on 2 cores; needs the package index)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/out/synth}
mkdir -p "$out"
py=.venv/bin/python
ref=.venv/bin/referee
specs=(toolz==1.2.0 cachetools==8.0.2 sqlparse==0.6.1)
args=()
for spec in "${specs[@]}"; do
  n=${spec%%==*}
  $ref synth "pypi:$spec" --out "$out/$n.jsonl" --limit 150 --json > "$out/$n.report.json"
  $ref tasks gold "$out/$n.jsonl" > "$out/$n.gold.jsonl"
  $py -c "import json,sys; [print(json.dumps({'task_id': json.loads(l)['id'], 'completion': ''})) for l in open(sys.argv[1])]" "$out/$n.jsonl" > "$out/$n.empty.jsonl"
  $ref verify --tasks "$out/$n.jsonl" --samples "$out/$n.gold.jsonl" --json > "$out/$n.gold.verdicts.jsonl"
  $ref verify --tasks "$out/$n.jsonl" --samples "$out/$n.empty.jsonl" --json > "$out/$n.empty.verdicts.jsonl"
  $py bench/synth_check.py "$out/$n.jsonl" "$out/$n.gold.verdicts.jsonl" "$out/$n.empty.verdicts.jsonl"
  $ref tasks split "$out/$n.jsonl"
  args+=("$n=$out/$n.jsonl:$out/$n.report.json")
done
$py bench/synth_cost.py "${args[@]}"
