"""referee's verdicts on AgentBench OS (``agentbench-os`` shell tasks) against the judge of
inspect-evals' AgentBench scorer (issue 30).

inspect-evals judges a question's task on the agent's submission: ``str(match) ==
str(submission)`` for a ``match`` task, else its comparison script (``check/integer-match.py``,
``string-match.py``, ``size-match.py``) run as ``python3 SCRIPT SUBMISSION EXPECTED``, where
EXPECTED is the stripped output of the task's ``example`` in the system
(``agent_bench_os_scorer.compare_answer_with_script``). Its scorer needs Docker and inspect-ai;
the comparison itself is those few lines and the package's own scripts, run here on the host
with this script's strings as arguments.

For each question task: the system is booted as referee boots it, the gold script runs, and
the answer it wrote is EXPECTED (``match`` for a match task); then the gold answer and
perturbed submissions (empty, off by one, a leading space, a trailing word, padded with
newlines, a wrong word) are judged by referee and by the scorer's comparison. referee's answer
script is the gold's followed by the perturbation of the answer file, so that it answers about
the system it is judged on (several tasks' setups are random: ``$RANDOM``, /dev/urandom); the
scorer gets the same perturbation of EXPECTED.
State tasks (``checking/N.sh``) are judged by the package's own check script in both: for them
only gold and empty are run, and they are counted apart.

Usage: ``python bench/agreement_agentbench.py TASKS.jsonl --out OUT.json``
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import re
import shlex
import subprocess
import sys
import time
from collections import Counter, defaultdict
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

from referee.domains.shell.agentbench import ANSWER_FILE
from referee.domains.shell.episode import Episode, ShellSpec, script_of
from referee.domains.shell.verifier import ShellVerifier
from referee.tasks.model import Task, read_tasks

_SPEC = re.compile(r"^spec = (\{.*\})$", re.M)


def check_spec(task: Task) -> dict[str, Any] | None:
    """The comparison the task's check makes (None: a state task)."""
    m = _SPEC.search(task.hidden["checks"][0]["source"])
    return ast.literal_eval(m[1]) if m else None


def scorer(spec: dict[str, Any], submission: str, expected: str) -> bool:
    """inspect-evals' comparison of ``submission`` with ``expected``."""
    if spec["kind"] == "match":
        return str(spec["match"]) == str(submission)
    scripts = Path(
        str(distribution("inspect-evals").locate_file("inspect_evals/agent_bench/data/scripts"))
    )
    r = subprocess.run(
        [sys.executable, str(scripts / spec["script"]), submission, expected],
        capture_output=True,
        timeout=30,
    )
    return r.returncode == 0


def gold_answer(verifier: ShellVerifier, task: Task) -> str | None:
    """The answer the gold writes, read from the system after it ran (None if it wrote none)."""
    spec = ShellSpec.of(task)
    with Episode(verifier.sandbox, spec, cgroups=verifier.cgroups) as ep:
        ep.session.run(script_of(task.hidden["reference"]), timeout_s=spec.timeout_s)
        try:
            raw = ep.workspace.read(ANSWER_FILE.removeprefix("/workspace/"))
        except Exception:
            return None
    return raw.decode(errors="replace").rstrip("\n")


#: Each perturbation of the gold answer ``a``, as Python source over ``a`` (a string).
PERTURBATIONS = {
    "gold": "a",
    "leading space": "' ' + a",
    "trailing word": "a + ' done'",
    "padded with newlines": "'\\n' + a + '\\n\\n'",
    "wrong word": "'no' if a != 'no' else 'yes'",
    "off by one": "str(int(a) + 1) if a.strip().lstrip('-').isdigit() else a + '1'",
}


def perturbed(expression: str, a: str) -> str:
    return str(eval(expression, {"__builtins__": {"str": str, "int": int}}, {"a": a}))


def answer_script(reference: str, expression: str) -> str:
    """The gold's script, then its answer file rewritten by ``expression``: in the same
    system, so a task whose setup is random (``$RANDOM``, /dev/urandom) is answered about the
    system it is judged on."""
    program = (
        f"p = {ANSWER_FILE!r}; a = open(p).read().rstrip('\\n'); open(p, 'w').write({expression})"
    )
    return f"{script_of(reference)}\ncd /workspace && python3 -c {shlex.quote(program)}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    tasks = [t for t in read_tasks(args.tasks) if t.provenance.source == "agentbench-os"]
    started = time.time()
    rows: list[dict[str, Any]] = []
    counts: Counter[tuple[str, str]] = Counter()
    with ShellVerifier() as verifier:
        for task in tasks:
            spec = check_spec(task)
            if spec is None:  # a state task: the package's check script decides in both
                for name, answer in (("gold", task.hidden["reference"]), ("empty", "")):
                    v = verifier.verify(task, answer)
                    rows.append(
                        {
                            "task": task.id,
                            "variant": f"state: {name}",
                            "referee": v.passed,
                            "scorer": name == "gold",
                            "tests": [f"{t.name}: {t.status} {t.detail}" for t in v.tests],
                        }
                    )
                continue
            expected = gold_answer(verifier, task)
            if expected is None:
                rows.append(
                    {
                        "task": task.id,
                        "variant": "gold",
                        "referee": False,
                        "scorer": True,
                        "note": "the gold wrote no answer",
                    }
                )
                continue
            tried = {"empty": ("", "")}
            for name, expression in PERTURBATIONS.items():
                script = answer_script(task.hidden["reference"], expression)
                tried[name] = (script, perturbed(expression, expected))
            for name, (script, sub) in tried.items():
                v = verifier.verify(task, script)
                if v.infra_error:
                    raise SystemExit(f"{task.id} {name}: infra error {v.infra_error}")
                # the scorer on the same perturbation of this boot's gold answer
                theirs = scorer(spec, sub.rstrip("\n"), expected.strip())
                row = {"task": task.id, "variant": name, "referee": v.passed, "scorer": theirs}
                if v.passed != theirs:
                    row["tests"] = [f"{t.name}: {t.status} {t.detail}" for t in v.tests]
                    row["submission"], row["expected"] = sub, expected
                rows.append(row)
            print(f"{task.id}: {len(rows)} answers judged", file=sys.stderr, flush=True)
    for r in rows:
        counts[(r["variant"], "agree" if r["referee"] == r["scorer"] else "disagree")] += 1
    by_variant: dict[str, dict[str, int]] = defaultdict(dict)
    for (name, what), n in counts.items():
        by_variant[name][what] = n
    for name in by_variant:
        picked = [r for r in rows if r["variant"] == name]
        by_variant[name]["referee_pass"] = sum(r["referee"] for r in picked)
        by_variant[name]["scorer_pass"] = sum(r["scorer"] for r in picked)
    total = len(rows)
    agreed = sum(1 for r in rows if r["referee"] == r["scorer"])
    report = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join(sys.argv),
        "machine": f"{platform.node()} {platform.machine()} python {platform.python_version()}",
        "tasks": len(tasks),
        "answers": total,
        "agreed": agreed,
        "agreement": agreed / total if total else None,
        "by_variant": by_variant,
        "disagreements": [r for r in rows if r["referee"] != r["scorer"]],
        "seconds": round(time.time() - started, 1),
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps({k: report[k] for k in ("tasks", "answers", "agreed", "agreement")}))


if __name__ == "__main__":
    main()
