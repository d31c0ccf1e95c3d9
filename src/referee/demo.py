"""``referee demo``: the sandbox at work on real tasks and against hostile programs.

Until the training loop exists, the demo shows the two things everything else stands on:

1. real tasks verified: the 164 HumanEval tasks recorded, their canonical solutions (all pass)
   and broken ones (none pass) through the hardened verifier, with the rate;
2. reward hacks (exit early, always-equal objects, patched checkers, forged results, frame
   inspection, order-dependent answers) rejected;
3. hostile programs contained: each one's outcome as the sandbox reported it.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from referee.sandbox import ExecResult, Limits
from referee.tasks.humaneval import humaneval_tasks
from referee.ui.tables import print_table
from referee.verify.function import FunctionVerifier, harness_sandbox
from referee.verify.record import record_function_tasks
from referee.verify.redteam import EXPLOITS, run_corpus

__all__ = ["HOSTILE_PROGRAMS", "run_demo"]

DEMO_EXPLOITS = (
    "sys-exit-at-import",
    "always-equal-object",
    "patch-harness-encoder",
    "forge-frames-via-frame-inspection",
    "caller-locals",
    "stateful-toggle",
)

HOSTILE_PROGRAMS: list[tuple[str, str, str]] = [
    (
        "fork bomb",
        "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass",
        "process-limit",
    ),
    ("memory bomb", "x = []\nwhile True: x.append(bytearray(16 << 20))", "memory-limit"),
    ("infinite loop", "while True: pass", "timeout"),
    (
        "daemon outliving the run",
        "import os, time\nif os.fork() == 0:\n    os.setsid(); time.sleep(60)\nprint('bye')",
        "stray-processes-killed",
    ),
    (
        "TCP to the host's loopback",
        "import socket\nsocket.create_connection(('127.0.0.1', 22), timeout=1)",
        "PermissionError",
    ),
    ("DNS lookup", "import socket\nsocket.getaddrinfo('example.com', 443)", "gaierror"),
    ("read /etc/shadow", "print(open('/etc/shadow').read())", "FileNotFoundError"),
    ("write /usr/bin", "open('/usr/bin/evil', 'w')", "OSError"),
    ("kill every process", "import os\nos.kill(-1, 9)", "PermissionError"),
    (
        "ptrace the supervisor",
        "import ctypes\nr = ctypes.CDLL(None).ptrace(16, 2, 0, 0)\nassert r == 0, 'refused'",
        "refused",
    ),
    ("stdout flood", "while True: print('x' * 10000)", "output-limit"),
    (
        "read host env",
        "import os\nprint(len(os.environ), 'HOME=' + os.environ['HOME'])",
        "HOME=/tmp",
    ),
]


def _outcome(r: ExecResult) -> str:
    tail = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    parts = [escape(r.summary())]
    if tail:
        parts.append(escape(tail[:70]))
    elif r.stdout.strip():
        parts.append(escape(r.stdout.strip().splitlines()[-1][:70]))
    return " | ".join(parts)


def run_demo(console: Console | None = None) -> int:
    """Run the demo on ``console`` (default: stdout, the demo's output is what it is for);
    returns 0 when every expectation held, 1 otherwise. Tables are never cut."""
    console = console or Console()
    ok = True
    with harness_sandbox() as sb:
        console.rule("[bold]referee: the sandbox")
        console.print("isolation layers on this machine: " + ", ".join(sb.isolation()))

        console.rule("[bold]Real tasks: HumanEval through the hardened verifier")
        t0 = time.perf_counter()
        tasks = record_function_tasks(sb, humaneval_tasks())
        console.print(
            f"recorded the tests of {len(tasks)} HumanEval tasks "
            f"({sum(len(t.hidden['inputs']) for t in tasks)} calls) in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        verifier = FunctionVerifier(sb, call_timeout_s=1.0, run_timeout_s=10.0)
        verifier.verify_many([(t, t.hidden["reference"]) for t in tasks[:8]])  # warm up
        t0 = time.perf_counter()
        canon = verifier.verify_many([(t, t.hidden["reference"]) for t in tasks])
        elapsed = time.perf_counter() - t0
        broken = verifier.verify_many([(t, "    return None\n") for t in tasks])
        table = Table("solutions", "verified", "passed", "failed", "mean reward")
        for label, vs in (
            ("canonical (should pass)", canon),
            ("broken: `return None` (should fail)", broken),
        ):
            n_pass = sum(v.passed for v in vs)
            mean = sum(v.reward for v in vs) / len(vs)
            table.add_row(label, str(len(vs)), str(n_pass), str(len(vs) - n_pass), f"{mean:.3f}")
        print_table(console, table)
        console.print(
            f"{len(canon)} canonical solutions verified in {elapsed:.2f} s = "
            f"[bold]{len(canon) / elapsed:.0f} verifications/s[/] with full isolation"
        )
        ok &= all(v.passed for v in canon) and not any(v.passed for v in broken)

        console.rule("[bold]Reward hacks against the verifier")
        targets = [tasks[i] for i in (0, 2, 11, 13, 29, 53, 120, 163)]
        picked = [e for e in EXPLOITS if e.name in DEMO_EXPLOITS]
        table = Table("exploit", "class", "tasks", "passed", "max reward", "flags")
        fast = FunctionVerifier(sb, call_timeout_s=0.5, run_timeout_s=3.0)
        for res in run_corpus(fast, targets, picked):
            kinds = sorted({f.kind for v in res.verdicts for f in v.flags})
            passes = sum(v.passed for v in res.verdicts)
            ok &= res.rejected
            table.add_row(
                res.exploit.name,
                res.exploit.klass,
                str(len(res.verdicts)),
                f"[green]{passes}[/]" if passes == 0 else f"[red]{passes}[/]",
                f"{res.max_reward:.2f}",
                ", ".join(kinds),
            )
        print_table(console, table)
        console.print(
            "[dim]The full corpus: `referee redteam` and `referee redteam --verifier pytest`.[/]"
        )

        console.rule("[bold]Hostile programs")
        table = Table("attack", "expected", "held", "what the sandbox reported")
        hostile_limits = Limits(timeout_s=2, memory_mb=128, max_processes=32, stdout_bytes=64 << 10)
        for name, source, expect in HOSTILE_PROGRAMS:
            r = sb.run_python(source, limits=hostile_limits)
            text = " ".join([*r.violations, r.stderr, r.stdout])
            held = expect in text and "REACHED" not in text
            ok &= held
            table.add_row(name, expect, "[green]yes[/]" if held else "[red]NO[/]", _outcome(r))
        after = sb.run_python("print('still healthy')")
        table.add_row(
            "(next run)",
            "still healthy",
            "[green]yes[/]" if after.ok else "[red]NO[/]",
            _outcome(after),
        )
        ok &= after.stdout == "still healthy\n"
        print_table(console, table)
    console.rule("[bold green]all expectations held" if ok else "[bold red]some expectation failed")
    return 0 if ok else 1
