"""``ShellVerifier``: the single-turn form of a shell task.

The answer is a shell script (or a model's text whose last ```bash/```sh block is one). It runs
once, as ``/bin/sh -c``, in ``/workspace`` of a freshly booted system (:class:`.episode.Episode`),
within the task's time limit; then every process is killed and the checks judge the final state.
The kernel and the session's limits stop what the script must not do; what it plainly attempts
outside the task's manifest (a write to a read-only path or outside the system, a signal to
init) is also read from the script (:func:`.manifest.script_violations`), flagged and fails
the test ``stayed within the manifest``.
The reward is all or nothing (:func:`.episode.judge`). A system that could not be booted (the
sandbox failed, the task's setup failed) is an ``infra_error`` verdict, never a 0.

>>> from referee.domains.shell.verifier import ShellVerifier               # doctest: +SKIP
>>> with ShellVerifier() as v:                                             # doctest: +SKIP
...     v.verify(task, task.hidden["reference"]).passed
True
"""

from __future__ import annotations

import threading
import time

from referee.errors import RefereeError
from referee.sandbox.cgroups import Cgroups, detect_cgroups
from referee.sandbox.core import Sandbox
from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSetup
from referee.verify.verdict import Flag, TestOutcome, Verdict

from .episode import Episode, ShellSpec, judge, script_of
from .manifest import Manifest, script_violations

__all__ = ["VERIFIER_NAME", "ShellVerifier", "make_verifier", "manifest_outcome"]

VERIFIER_NAME = "shell-state@1"


def manifest_outcome(violations: list[str]) -> TestOutcome:
    """The test ``stayed within the manifest``: failed by any action outside it."""
    return TestOutcome(
        name="stayed within the manifest",
        status="failed" if violations else "passed",
        detail="; ".join(violations)[:300],
    )


class ShellVerifier:
    """Judges shell tasks (``TaskKind.SHELL``) by their final system state.

    ``sandbox`` is shared if given (and then not closed here); otherwise one is made on first
    use. The sessions' cgroups (memory and pids limits) are this verifier's own.
    """

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self._given = sandbox
        self._sandbox: Sandbox | None = None
        self._cgroups: Cgroups | None = None
        self._cgroups_made = False
        self._lock = threading.Lock()  # VerifierSet.verify_many calls from many threads

    @property
    def sandbox(self) -> Sandbox:
        if self._given is not None:
            return self._given
        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox()
            return self._sandbox

    @property
    def cgroups(self) -> Cgroups | None:
        with self._lock:
            if not self._cgroups_made:
                self._cgroups, self._cgroups_made = detect_cgroups(), True
            return self._cgroups

    def verify(self, task: Task, answer: str) -> Verdict:
        """The verdict on ``answer`` for ``task``; never raises for what the script does."""
        t0 = time.monotonic()
        try:
            spec = ShellSpec.of(task)
        except RefereeError as e:
            return Verdict.infra(task.id, str(e), VERIFIER_NAME)
        script = script_of(answer)
        violations = script_violations(script, Manifest.of(spec.manifest))
        try:
            with Episode(self.sandbox, spec, cgroups=self.cgroups) as ep:
                t1 = time.monotonic()
                result = ep.session.run(script, timeout_s=spec.timeout_s)
                t2 = time.monotonic()
                outcomes = ep.finish(result.stdout, truncated=result.truncated)
        except RefereeError as e:
            return Verdict.infra(task.id, f"could not judge: {e}", VERIFIER_NAME)
        except OSError as e:
            return Verdict.infra(task.id, f"could not judge: {e!r}", VERIFIER_NAME)
        outcomes.append(manifest_outcome(violations))
        reward, passed = judge(outcomes)
        return Verdict(
            task_id=task.id,
            reward=reward,
            passed=passed,
            tests=outcomes,
            flags=[Flag(kind="manifest-violation", evidence=v) for v in violations],
            verifier=VERIFIER_NAME,
            timings={
                "boot_s": t1 - t0,
                "answer_s": t2 - t1,
                "checks_s": time.monotonic() - t2,
                "answer_timed_out": float(result.timed_out),
            },
        )

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        if self._cgroups is not None:
            self._cgroups.close()
            self._cgroups = None

    def __enter__(self) -> ShellVerifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_verifier(setup: VerifierSetup) -> ShellVerifier:
    """The dispatch registry's factory: a verifier on the set's sandbox."""
    return ShellVerifier(setup.sandbox())
