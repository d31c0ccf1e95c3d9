"""The dataframe verifier: a candidate pipeline judged on hidden tables, compared on the host.

How an answer is judged (nothing here trusts the candidate's process):

1. The answer is the model's text; the program is its last ```python block (or the text itself
   when it has no fence). A static guard adds flags (exit calls, patched modules, frame
   inspection) as evidence; they do not decide the reward.
2. For each hidden input set, one sandboxed run (its own time and memory limits, killed when
   exceeded): the grader's runner loads the tables, calls ``transform``, and reports the returned
   DataFrame as plain data. The expected results and the rules' numbers never enter the sandbox.
3. On the host, :func:`~referee.domains.dataframe.compare.compare_tables` compares the report
   with the reference's (columns, kinds, rows as a multiset or sequence, float tolerance,
   missing values), and :func:`~referee.domains.dataframe.compare.check_rules` checks the task's
   rules (unique keys, no missing values, totals of the hidden input, row counts, sort order).
   Where the task declares a data contract (``df-pipeline``), pandera checks it on a frame
   rebuilt from the report (:func:`~referee.domains.dataframe.datacontract.check_contract`);
   its violations, one sentence per rule, come first in the set's detail.

An input set passes when the table matches, no rule is broken and the contract holds;
``reward`` is the share of sets passed, ``passed`` needs all of them. A program killed for time
or memory on one set is not run on the rest (they count as skipped): a hostile answer costs one
limit, not one per set.
A sandbox failure, or a hidden input the grader's own runner cannot load, is an
``infra_error`` verdict, never a 0 or a pass.

>>> with DataframeVerifier() as v:                                         # doctest: +SKIP
...     v.verify(task, "```python\\ndef transform(tables): ...\\n```").reward
0.0
"""

from __future__ import annotations

import time
from typing import Any

from referee.domains.dataframe.compare import check_rules, compare_tables, well_formed
from referee.domains.dataframe.execute import DEFAULT_LIMITS, dataframe_sandbox, run_program
from referee.domains.dataframe.spec import DataframeSpec, dataframe_spec
from referee.domains.kit import SandboxedVerifier
from referee.envs.answers import extract_code
from referee.errors import RefereeError, VerifierError
from referee.sandbox import Limits, Sandbox
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSetup
from referee.verify.guard import scan
from referee.verify.verdict import Flag, TestOutcome, Verdict

__all__ = ["VERSION", "DataframeVerifier", "answer_code", "count_tests", "make_verifier"]

VERSION = "dataframe@1"
_LOAD_PROBE = (
    "import pandas as pd\n\n"
    "def transform(tables):\n"
    "    return pd.DataFrame({'rows': [len(t) for t in tables.values()]})\n"
)


def _contract_breaks(result: dict[str, Any], contract: dict[str, Any]) -> list[str]:
    """The contract's violations by a well-formed ``result`` (pandera imported on first use)."""
    from referee.domains.dataframe.datacontract import check_contract

    try:
        return check_contract(result, contract)
    except Exception as e:  # the report is the candidate's: a value pandas refuses fails it
        return [f"contract: the output could not be checked ({type(e).__name__})"]


def answer_code(answer: str) -> str:
    """The program in ``answer``: its last ```python block, else its only bare block, else the
    text as it is."""
    return extract_code(answer) or ""


def count_tests(task: Task) -> int:
    """How many hidden input sets decide ``task``'s reward."""
    return len(task.hidden.get("instances", []))


def make_verifier(setup: VerifierSetup) -> DataframeVerifier:
    """The dispatch registry's factory: a verifier with a dataframe sandbox of its own (the
    set's sandbox has no pandas), with as many workers as the set's."""
    workers = setup.sandbox().python_workers
    return DataframeVerifier(dataframe_sandbox(python_workers=workers), own_sandbox=True)


class DataframeVerifier(SandboxedVerifier):
    """Judges answers to dataframe tasks (:class:`~referee.tasks.kinds.TaskKind.DATAFRAME`).

    ``sandbox`` must come from :func:`~referee.domains.dataframe.execute.dataframe_sandbox`
    (one is made, and closed with the verifier, when none is given; a given one is closed with
    it too when ``own_sandbox``).
    """

    name = "dataframe"

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        own_sandbox: bool = False,
    ) -> None:
        super().__init__(sandbox, dataframe_sandbox, own=own_sandbox)
        if "referee_dataframe_boot" not in getattr(self.sandbox, "preload", {}):
            raise VerifierError(
                "DataframeVerifier needs a sandbox with pandas and its runner preloaded; make "
                "one with referee.domains.dataframe.execute.dataframe_sandbox()"
            )
        self.limits = limits

    def verify(self, task: Task, answer: str, /) -> Verdict:
        """The verdict on ``answer`` for ``task``; never raises (a fault is an infra error)."""
        try:
            return self._verify(task, answer)
        except Exception as e:  # a bug here must cost a retry, never hand out a reward
            return Verdict.infra(task.id, f"verifier crashed: {type(e).__name__}: {e}", VERSION)

    def _verify(self, task: Task, answer: str) -> Verdict:
        t0 = time.perf_counter()
        try:
            spec = dataframe_spec(task)
        except VerifierError as e:
            return Verdict.infra(task.id, str(e), VERSION)
        code = answer_code(answer)
        flags = scan(code) if code.strip() else []
        tests: list[TestOutcome] = []
        run_s = 0.0
        for i, instance in enumerate(spec.instances):
            try:
                out = run_program(
                    self.sandbox, code, spec.schema, instance.inputs, limits=self.limits
                )
            except RefereeError as e:
                return Verdict.infra(task.id, f"sandbox: {e}", VERSION)
            if out.exec_result is not None:
                run_s += out.exec_result.wall_s
            if out.infra:
                # The candidate shares the runner's process and can write its frames: an input
                # error is believed only if a run without candidate code fails to load too.
                try:
                    loads = self._inputs_load(spec, i)
                except RefereeError as e:
                    return Verdict.infra(task.id, f"sandbox: {e}", VERSION)
                if not loads:
                    return Verdict.infra(task.id, f"hidden set {i}: {out.error}", VERSION)
                flags.append(
                    Flag(kind="forged-infra-error", evidence=f"hidden set {i}: {out.error}"[:200])
                )
                tests.append(
                    TestOutcome(
                        name=f"hidden set {i}",
                        status="failed",
                        detail="reported an input error; the inputs load without its code",
                    )
                )
                continue
            tests.append(self._judge(spec, i, out.result, out.error))
            if tests[-1].status == "timeout" or (
                out.exec_result is not None and out.exec_result.memory_exceeded
            ):
                # A program past its limits on one set is not run on the others: a hostile
                # answer costs one time limit, not one per set.
                tests += [
                    TestOutcome(name=f"hidden set {j}", status="skipped", detail="not run")
                    for j in range(i + 1, len(spec.instances))
                ]
                break
        passed_n = sum(t.status == "passed" for t in tests)
        return Verdict(
            task_id=task.id,
            reward=passed_n / len(tests),
            passed=passed_n == len(tests),
            tests=tests,
            flags=flags,
            timings={"run_s": run_s, "total_s": time.perf_counter() - t0},
            verifier=VERSION,
        )

    def _inputs_load(self, spec: DataframeSpec, i: int) -> bool:
        """Whether hidden set ``i`` loads in a run of the grader's own probe (no candidate)."""
        out = run_program(
            self.sandbox, _LOAD_PROBE, spec.schema, spec.instances[i].inputs, limits=self.limits
        )
        return out.result is not None

    @staticmethod
    def _judge(spec: DataframeSpec, i: int, result: object, error: str) -> TestOutcome:
        name = f"hidden set {i}"
        if result is None or not isinstance(result, dict):
            if error.startswith("time limit"):
                return TestOutcome(name=name, status="timeout", detail=error)
            return TestOutcome(name=name, status="error", detail=(error or "no result")[:300])
        instance = spec.instances[i]
        try:
            why = compare_tables(
                result,
                instance.expected,
                ordered=spec.ordered,
                tol=spec.tol,
                int_float=spec.int_float,
            )
            broken = check_rules(result, spec.rules, instance.facts)
        except (ValueError, TypeError, OverflowError, RecursionError) as e:
            # What the candidate reported must never crash the grader into an infra error.
            return TestOutcome(name=name, status="failed", detail=f"malformed result ({e})")
        contract: list[str] = []
        if spec.contract is not None and not well_formed(result):
            contract = _contract_breaks(result, spec.contract)
        if why or broken or contract:
            # The contract's first three violations name the rules; the comparison's finding
            # always follows them (the detail is what the model is shown).
            messages = [m for m in (*contract[:3], why, *broken) if m]
            return TestOutcome(name=name, status="failed", detail="; ".join(messages[:4]))
        return TestOutcome(name=name, status="passed")
