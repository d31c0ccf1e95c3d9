"""What every domain repeats, written once: a domain is its families, its verifier, its
environment, its import and its corpus, and this kit does the rest.

* :class:`Domain` (:mod:`.domain`): the domain declared as data (its parts named by
  ``"module:attribute"`` targets in its package); :meth:`Domain.register` registers each part
  lazily in referee's registries, the domain's ``register()`` entry point calls it;
* :func:`judge_task` and :func:`exploit_outcome` (:mod:`.redteam`): a red-team corpus judged
  against the empty answer on the same task, by one rule;
* :func:`check_reference_and_empty` (:mod:`.imports`): an imported row becomes a task only if its
  reference passes and the empty answer fails;
* :func:`tool_call_error` and :func:`tool_schemas` (:mod:`.tools`): an environment's tool calls
  checked against its schemas;
* :func:`runner_sandbox` and :func:`runner_source` (:mod:`.sandbox`): a sandbox whose workers have
  the domain's grader-side runner module preloaded;
* :class:`SandboxedVerifier` (:mod:`.verifier`): a verifier's sandbox, closed with it where it
  made it.

``docs/domains.md`` is the guide; ``referee domains new NAME`` writes a domain built on this kit.

>>> from referee.domains.kit import Domain, hidden_count
>>> demo = Domain("demo", package="referee_demo", kind="demo", answer_format="code",
...               families={}, verifier="verifier:make_verifier",
...               count_tests=hidden_count("inputs"))
>>> demo.target("env:DemoEnv")
'referee_demo.env:DemoEnv'
"""

from referee.domains.kit.domain import Domain, FamilyPart, Source, families, hidden_count
from referee.domains.kit.imports import check_reference_and_empty, failure
from referee.domains.kit.redteam import Attack, exploit_outcome, judge_task
from referee.domains.kit.sandbox import runner_sandbox, runner_source
from referee.domains.kit.tools import tool_call_error, tool_schemas
from referee.domains.kit.verifier import SandboxedVerifier

__all__ = [
    "Attack",
    "Domain",
    "FamilyPart",
    "SandboxedVerifier",
    "Source",
    "check_reference_and_empty",
    "exploit_outcome",
    "failure",
    "families",
    "hidden_count",
    "judge_task",
    "runner_sandbox",
    "runner_source",
    "tool_call_error",
    "tool_schemas",
]
