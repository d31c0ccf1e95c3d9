"""``referee demo``: the sandbox at work on real tasks and against hostile programs.

Until the training loop exists, the demo shows the two things everything else stands on:

1. real tasks verified in the sandbox: the 164 HumanEval canonical solutions (all should pass)
   and 164 broken solutions (all should fail), on the fork-server fast path, with the rate;
2. hostile programs contained: each one's outcome as the sandbox reported it.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from referee.sandbox import ExecResult, Limits, Sandbox
from referee.tasks.humaneval import check_program, load_problems

__all__ = ["HOSTILE_PROGRAMS", "run_demo"]

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
    """Run the demo; returns 0 when every expectation held, 1 otherwise."""
    console = console or Console(stderr=True)
    ok = True
    with Sandbox(python_workers=2) as sb:
        console.rule("[bold]referee: the sandbox")
        console.print("isolation layers on this machine: " + ", ".join(sb.isolation()))

        console.rule("[bold]Real tasks: HumanEval in the sandbox")
        problems = load_problems()
        limits = Limits(timeout_s=5, memory_mb=512)
        cases = [(p, p.canonical_solution, True) for p in problems]
        cases += [(p, "    return None\n", False) for p in problems]
        results: list[tuple[bool, ExecResult]] = []

        def check(case: tuple[object, str, bool]) -> tuple[bool, ExecResult]:
            problem, completion, expect = case
            r = sb.run_python(check_program(problem, completion), limits=limits)  # type: ignore[arg-type]
            return expect, r

        sb.run_python("pass")  # start the workers before the clock
        t0 = time.perf_counter()
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task("checking", total=len(cases))
            with ThreadPoolExecutor(2) as pool:
                for item in pool.map(check, cases):
                    results.append(item)
                    progress.advance(bar)
        elapsed = time.perf_counter() - t0
        canon = [r for expect, r in results if expect]
        broken = [r for expect, r in results if not expect]
        canon_pass = sum(r.ok for r in canon)
        broken_pass = sum(r.ok for r in broken)
        table = Table("solutions", "runs", "passed", "failed")
        table.add_row(
            "canonical (should pass)",
            str(len(canon)),
            str(canon_pass),
            str(len(canon) - canon_pass),
        )
        table.add_row(
            "broken: `return None` (should fail)",
            str(len(broken)),
            str(broken_pass),
            str(len(broken) - broken_pass),
        )
        console.print(table)
        console.print(
            f"{len(cases)} checks in {elapsed:.2f} s = [bold]{len(cases) / elapsed:.0f} "
            "checks/s[/] with full isolation on the fork-server path"
        )
        ok &= canon_pass == len(canon) and broken_pass == 0
        console.print(
            "[dim]Pass/fail here is the exit status of the check program; the hardened "
            "verifier that cannot be fooled by exit(0) is the next component.[/]"
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
        console.print(table)
    console.rule("[bold green]all expectations held" if ok else "[bold red]some expectation failed")
    return 0 if ok else 1
