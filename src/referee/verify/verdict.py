"""``Verdict``: what a verifier decided about one solution, and the evidence.

``reward`` is the share of tests passed (partial credit); ``passed`` means all of them passed.
An ``infra_error`` (the sandbox failed, a verifier crashed) is kept apart from a model failure:
such a verdict is never a pass and should be retried or counted separately, not trained on as 0.
``sandbox`` is what the verification's sandbox runs cost (CPU and wall seconds, peak memory,
runs; :mod:`referee.sandbox.metering`), set by the verifiers that meter themselves
(``FunctionVerifier``, ``VerifierSet``); ``None`` in verdicts made elsewhere or stored before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

from referee.plain import PlainModel, coerce, maker
from referee.sandbox.metering import SandboxUsage, metering

__all__ = ["VERDICT_SCHEMA_VERSION", "Flag", "TestOutcome", "TestStatus", "Verdict"]

VERDICT_SCHEMA_VERSION = 1
TestStatus = Literal["passed", "failed", "error", "skipped", "timeout", "missing"]


@dataclass(frozen=True, kw_only=True)
class TestOutcome(PlainModel):
    __test__ = False  # a verdict's part, not a test class for pytest to collect

    name: str
    status: TestStatus
    detail: str = ""

    def __post_init__(self) -> None:
        coerce(self, choices={"status": get_args(TestStatus)})


@dataclass(frozen=True, kw_only=True)
class Flag(PlainModel):
    """Suspected reward hacking, with the evidence (a code excerpt, a behaviour)."""

    kind: str
    evidence: str


@dataclass(frozen=True, kw_only=True)
class Verdict(PlainModel):
    """(A :class:`~referee.plain.PlainModel`, so that a one-shot command can judge and print
    before pydantic is imported; ``model_validate`` reads one back through pydantic.)"""

    schema_version: int = VERDICT_SCHEMA_VERSION
    task_id: str
    reward: float
    passed: bool
    tests: list[TestOutcome] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    infra_error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    verifier: str = ""
    sandbox: SandboxUsage | None = None

    def __post_init__(self) -> None:
        coerce(
            self, floats=("reward",), lists=("tests", "flags"), float_dicts=("timings",),
            nested={"tests": maker(TestOutcome), "flags": maker(Flag),
                    "sandbox": maker(SandboxUsage)},
            ranges={"reward": (0.0, 1.0)},
        )  # fmt: skip

    @classmethod
    def infra(cls, task_id: str, error: str, verifier: str) -> Verdict:
        """A verdict for a check that could not be carried out: never a pass."""
        return cls(task_id=task_id, reward=0.0, passed=False, infra_error=error, verifier=verifier)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.tests:
            out[t.status] = out.get(t.status, 0) + 1
        return out


def metered_verdict(
    task_id: str,
    verifier: str,
    judge: Callable[[], Verdict],
    *,
    infra: tuple[type[Exception], ...] = (),
) -> Verdict:
    """``judge()``'s verdict with what its sandbox runs cost on it (``Verdict.sandbox``); never
    raises. An exception of the ``infra`` types is an infra error with its own message; any other
    is a crash of the verifier, also an infra error: a bug here must cost a retry, never hand out
    a reward."""
    with metering() as meter:
        try:
            verdict = judge()
        except infra as e:
            verdict = Verdict.infra(task_id, str(e), verifier)
        except Exception as e:
            verdict = Verdict.infra(task_id, f"verifier crashed: {type(e).__name__}: {e}", verifier)
    return verdict.model_copy(update={"sandbox": meter.usage()})
