"""Verdicts that do not depend on load: gold answers pass with the machine's cores busy.

Four busy-loop processes (the test's own priority) compete with every run here. Time limits
are judged on CPU time, with the wall clock as a backstop (referee.sandbox.cputime): a right
answer that needs most of its limit in CPU still passes when it gets only part of a core, and an
infinite loop still fails on its time limit. With wall-clock limits the "heavy" gold answers
below (0.3 s of CPU against a 0.6 s limit, which they cannot get within 0.6 s of wall time at
about 2/5 of a core) were judged "time limit exceeded".
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from referee.tasks.model import Task
from referee.verify.program import ProgramVerifier
from referee.verify.program.redteam import GOLD, SUM_TASK

HOGS = 4


@pytest.fixture(scope="module")
def hogs() -> Iterator[None]:
    # Each in a session of its own: with autogroup scheduling, CPU is shared between sessions
    # first (the sandbox's workers have theirs), so hogs in the test's session would compete
    # with the test, not with the runs.
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(HOGS)
    ]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _task(name: str, cases: list[dict[str, str]], **payload: Any) -> Task:
    return Task.create(
        name=f"test/contention-{name}-v1",
        prompt=name,
        kind="program",
        answer_format="code",
        payload={"io": "stdin", "examples": [], **payload},
        hidden={"cases": cases, "compare": "tokens"},
    )


# A right answer that needs 0.3 s of CPU (it spins on its own CPU clock, so on any machine),
# against a 0.6 s limit.
HEAVY = _task(
    "heavy",
    [{"input": "2 3\n", "output": "5\n"}, {"input": "-1 1\n", "output": "0\n"}],
    time_limit_s=0.6,
)
HEAVY_CPP = (
    "```cpp\n#include <cstdio>\n#include <ctime>\nint main(){long a,b;"
    'if(scanf("%ld %ld",&a,&b)!=2)return 1;while(clock()<0.3*CLOCKS_PER_SEC){}'
    'printf("%ld\\n",a+b);}\n```\n'
)
HEAVY_FN = _task(
    "heavy-fn",
    [{"input": "[2, 3]", "output": "5"}, {"input": "[-1, 1]", "output": "0"}],
    io="function",
    fn_name="add",
    languages=["python"],
    time_limit_s=0.6,
)
HEAVY_PY = (
    "```python\nimport time\n\ndef add(a, b):\n    t = time.process_time()\n"
    "    while time.process_time() - t < 0.3:\n        pass\n    return a + b\n```\n"
)
LOOP = _task("loop", [{"input": "1 2\n", "output": "3\n"}], time_limit_s=0.5)


@pytest.fixture(scope="module")
def verifier(program_sb: Any) -> ProgramVerifier:
    return ProgramVerifier(program_sb)


def test_the_cpp_gold_of_the_sum_task_passes_under_busy_loops(
    verifier: ProgramVerifier, hogs: None
) -> None:
    v = verifier.verify(SUM_TASK, f"```cpp\n{GOLD['cpp']}```\n")
    assert v.passed and v.reward == 1.0, v.tests


def test_gold_answers_needing_half_their_cpu_limit_pass_under_busy_loops(
    verifier: ProgramVerifier, hogs: None
) -> None:
    cpp = verifier.verify(HEAVY, HEAVY_CPP)
    assert cpp.passed and cpp.infra_error is None, cpp.tests
    fn = verifier.verify(HEAVY_FN, HEAVY_PY)
    assert fn.passed and fn.infra_error is None, fn.tests


def test_an_infinite_loop_still_fails_on_its_time_limit_under_busy_loops(
    verifier: ProgramVerifier, hogs: None
) -> None:
    v = verifier.verify(LOOP, "```cpp\nint main(){for(;;){}}\n```\n")
    assert not v.passed and v.infra_error is None
    assert [t.status for t in v.tests] == ["timeout"], v.tests
    assert v.tests[0].detail.startswith("time limit exceeded"), v.tests
    loop_fn = "```python\ndef add(a, b):\n    while True:\n        pass\n```\n"
    fn = verifier.verify(HEAVY_FN, loop_fn)
    assert fn.infra_error is None and {t.status for t in fn.tests} == {"timeout"}, fn.tests
