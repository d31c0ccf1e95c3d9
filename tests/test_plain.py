"""``referee.plain``: the records on a verdict's path (ExecResult, SandboxUsage, Verdict and its
parts) behave as the pydantic models they replaced: the same dumps, the same coercions on
construction, validation through pydantic, and use as fields of pydantic models; and nothing
on the sandbox's or the function verifier's path imports pydantic."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter

import referee
import referee.plain as plain_module
from referee.sandbox import ExecResult
from referee.sandbox.metering import SandboxUsage
from referee.verify.verdict import Flag, TestOutcome, Verdict


def _verdict() -> Verdict:
    return Verdict(
        task_id="t/1",
        reward=1,
        passed=True,
        tests=[{"name": "call 0", "status": "passed"}, TestOutcome(name="call 1", status="failed")],
        flags=(Flag(kind="exit-call", evidence="sys.exit"),),
        timings={"run_s": 1},
        verifier="function@1",
        sandbox={"cpu_s": 0, "runs": 1},
    )


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(plain_module).failed == 0


def test_construction_coerces_as_pydantic_did() -> None:
    v = _verdict()
    assert v.reward == 1.0 and isinstance(v.reward, float)
    assert v.tests[0] == TestOutcome(name="call 0", status="passed")
    assert isinstance(v.flags, list) and v.timings == {"run_s": 1.0}
    assert v.sandbox == SandboxUsage(cpu_s=0.0, runs=1)
    r = ExecResult(exit_code=0, wall_s=1, violations=("timeout",))
    assert isinstance(r.wall_s, float) and r.violations == ["timeout"]


@pytest.mark.parametrize(
    "bad",
    [
        {"reward": 1.5},
        {"reward": -0.1},
        {"reward": "high"},
        {"tests": [{"name": "x", "status": "won"}]},
        {"tests": "passed"},
        {"timings": {"run_s": "fast"}},
    ],
)
def test_a_value_out_of_its_field_is_refused(bad) -> None:
    fields = {"task_id": "t", "reward": 0.0, "passed": False, **bad}
    with pytest.raises(ValueError):
        Verdict(**fields)
    with pytest.raises(ValueError):  # pydantic's ValidationError is a ValueError
        Verdict.model_validate(fields)


def test_dumps_are_pydantics() -> None:
    v = _verdict()
    for mode in ("python", "json"):
        assert v.model_dump(mode=mode) == TypeAdapter(Verdict).dump_python(v, mode=mode)
    assert json.loads(v.model_dump_json()) == v.model_dump(mode="json")
    assert list(v.model_dump()) == [
        "schema_version", "task_id", "reward", "passed", "tests", "flags", "infra_error",
        "timings", "verifier", "sandbox",
    ]  # fmt: skip
    assert "infra_error" not in v.model_dump(exclude_none=True)
    assert v.model_dump(include={"task_id"}) == {"task_id": "t/1"}  # other options: pydantic's


def test_validate_and_copy_round_trip() -> None:
    v = _verdict()
    assert Verdict.model_validate(v.model_dump()) == v
    assert Verdict.model_validate_json(json.dumps(v.model_dump(mode="json"))) == v
    assert Verdict.model_validate(v) is v
    c = v.model_copy(update={"reward": 0, "passed": False})
    assert (c.reward, c.passed, c.tests) == (0.0, False, v.tests)
    assert (
        ExecResult.model_validate({"exit_code": None, "signal": 9})
        .summary()
        .startswith("killed by signal 9")
    )
    assert "reward" in Verdict.model_json_schema()["properties"]


def test_records_are_fields_of_pydantic_models() -> None:
    class Holder(BaseModel):
        verdict: Verdict | None = None
        results: list[ExecResult] = []

    h = Holder(verdict=_verdict().model_dump(), results=[{"exit_code": 0}])
    assert h.verdict == _verdict() and h.results[0].exit_code == 0
    again = Holder.model_validate_json(h.model_dump_json())
    assert again == h
    assert h.model_dump(mode="json")["verdict"] == _verdict().model_dump(mode="json")


def test_records_are_frozen_and_hash_like_pydantics() -> None:
    r = ExecResult(exit_code=0)
    with pytest.raises(AttributeError):
        r.exit_code = 1  # type: ignore[misc]
    assert SandboxUsage(runs=1) + SandboxUsage(runs=2) == SandboxUsage(runs=3)
    assert hash(Flag(kind="a", evidence="b")) == hash(Flag(kind="a", evidence="b"))


def test_the_verdicts_path_does_not_import_pydantic() -> None:
    code = (
        "import sys\n"
        "from referee.verify.function import FunctionVerifier, harness_sandbox\n"
        "from referee.verify.first import judge_first\n"
        "import referee.sandbox.core, referee.sandbox.metering\n"
        "print('pydantic' in sys.modules)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(referee.__file__).parents[1])},
        timeout=120,
    )
    assert p.stdout == "False\n", p.stdout + p.stderr
