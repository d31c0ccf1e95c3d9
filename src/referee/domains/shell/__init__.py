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
* the import sources ``shell-rows`` (:mod:`.imports`), ``harbor`` (:mod:`.harbor_import`),
  ``agentbench-os`` (:mod:`.agentbench`) and ``intercode-bash``
  (:mod:`.intercode`: InterCode's bash queries, read from its package);
* the red-team corpus ``shell`` (:mod:`.redteam`).
"""

from __future__ import annotations

from referee.domains.kit import Domain, FamilyPart, Source, hidden_count
from referee.tasks.kinds import TaskKind

__all__ = ["DOMAIN", "FAMILY_MODULES", "register"]

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

DOMAIN = Domain(
    "shell",
    package=__name__,
    kind=TaskKind.SHELL,
    families={
        name: FamilyPart(f"{module}:generate", about)
        for name, (module, about) in FAMILY_MODULES.items()
    },
    verifier="verifier:make_verifier",
    count_tests=hidden_count("checks"),
    # Lazy, like every part: its constructor's signature stays readable (the server's sessions
    # give an environment only the keyword arguments it takes: referee.envs.env_keywords).
    env="env:ShellEnv",
    sources=(
        Source(
            "shell-rows",
            "imports:load_rows",
            "shell operations tasks: JSONL rows of prompt, setup, check, reference",
        ),
        Source(
            "harbor",
            "harbor_import:harbor_tasks",
            "Harbor task directories (Terminal-Bench 2): plain Debian/Ubuntu images",
        ),
        Source(
            "agentbench-os",
            "agentbench:agentbench_os_tasks",
            "AgentBench OS tasks (dev 26, test 119) from inspect-evals' own data",
            reads_file=False,
            options=("subset",),
        ),
        Source(
            "intercode-bash",
            "intercode:intercode_bash_tasks",
            "InterCode's bash queries (the intercode-bench package's files)",
            reads_file=False,
        ),
    ),
    corpus="redteam:run_corpus",
)


def register() -> None:
    """Operations on a small Linux system, judged by checks of its final state."""
    DOMAIN.register()
