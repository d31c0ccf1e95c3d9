"""The shell domain: operations tasks on a small Linux system in the sandbox.

An operator's jobs (fix a config so a service starts, rotate logs by a policy, stop the process
that fills the disk, set permissions, write an idempotent script), judged by checks of the
system's **final state** (files, modes, content hashes, processes, a service's answer) that the
grader runs after the episode, with every process of the agent dead. See ``docs/domains/shell.md``.

Registered here, lazily (nothing of the domain is imported until a task is made or judged):

* families ``ops-config-fix``, ``ops-logrotate``, ``ops-runaway-process``, ``ops-permissions``,
  ``ops-idempotent-script`` (:mod:`.families`);
* the verifier of ``TaskKind.SHELL`` (:class:`.verifier.ShellVerifier`, single-turn: the answer
  is a script);
* the environment ``"shell"`` (:class:`.env.ShellEnv`, multi-turn with tools and a permission
  manifest);
* the import sources ``shell-rows`` (:mod:`.imports`) and ``agentbench-os`` (:mod:`.agentbench`);
* the red-team corpus ``shell`` (:mod:`.redteam`).
"""

from __future__ import annotations

from referee.domains.registry import lazy, register_corpus, register_family
from referee.envs.registry import register_env
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.tasks.sources import register_source
from referee.verify.dispatch import Verifier, VerifierSetup, register_kind

__all__ = ["FAMILY_MODULES", "register"]

#: Each family and the module that builds it.
FAMILY_MODULES = {
    "ops-config-fix": (
        "config_fix",
        "fix a broken INI config so the grader's start of the service answers",
    ),
    "ops-logrotate": ("logrotate", "rotate and compress an application's logs by a policy"),
    "ops-runaway-process": ("runaway", "find and stop the process that fills the disk"),
    "ops-permissions": (
        "access",
        "set modes so one simulated user can read a file and another not",
    ),
    "ops-idempotent-script": (
        "idempotent",
        "write a provisioning script whose second run changes nothing",
    ),
}


def _verifier(setup: VerifierSetup) -> Verifier:
    from referee.domains.shell.verifier import ShellVerifier

    return ShellVerifier(setup.sandbox())


def _count_checks(task: Task) -> int:
    checks = task.hidden.get("checks", [])
    return len(checks) if isinstance(checks, list) else 0


def register() -> None:
    """Operations on a small Linux system, judged by checks of its final state."""
    for _name, (_module, _description) in FAMILY_MODULES.items():
        register_family(
            _name,
            lazy(f"referee.domains.shell.{_module}:generate"),
            domain="shell",
            description=_description,
        )
    register_kind(TaskKind.SHELL, _verifier, _count_checks)
    # Lazy, like every domain's: its constructor's signature stays readable (the server's sessions
    # give an environment only the keyword arguments it takes: referee.envs.env_keywords).
    register_env("shell", lazy("referee.domains.shell.env:ShellEnv"))
    register_source(
        "shell-rows",
        lazy("referee.domains.shell.imports:load_rows"),
        description="shell operations tasks: JSONL rows of prompt, setup, check, reference",
        reads_file=True,
        skips_bad_rows=True,
    )
    register_source(
        "agentbench-os",
        lazy("referee.domains.shell.agentbench:agentbench_os_tasks"),
        description="AgentBench OS tasks (dev 26, test 119) from inspect-evals' own data",
        options=("subset",),
        skips_bad_rows=True,
    )
    register_corpus("shell", lazy("referee.domains.shell.redteam:run_corpus"))
