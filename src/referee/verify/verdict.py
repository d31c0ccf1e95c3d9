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
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.sandbox.metering import SandboxUsage, metering

__all__ = ["VERDICT_SCHEMA_VERSION", "Flag", "TestOutcome", "TestStatus", "Verdict"]

VERDICT_SCHEMA_VERSION = 1
TestStatus = Literal["passed", "failed", "error", "skipped", "timeout", "missing"]


class TestOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    status: TestStatus
    detail: str = ""


class Flag(BaseModel):
    """Suspected reward hacking, with the evidence (a code excerpt, a behaviour)."""

    model_config = ConfigDict(frozen=True)
    kind: str
    evidence: str


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    schema_version: int = VERDICT_SCHEMA_VERSION
    task_id: str
    reward: float = Field(ge=0.0, le=1.0)
    passed: bool
    tests: list[TestOutcome] = Field(default_factory=list)
    flags: list[Flag] = Field(default_factory=list)
    infra_error: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    verifier: str = ""
    sandbox: SandboxUsage | None = None

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
