"""Import source ``intercode-bash``: InterCode's bash tasks, read from the installed
``intercode-bench`` package (``referee tasks import intercode-bash --out tasks.jsonl``).

InterCode (Yang et al., NeurIPS 2023) ships 24 bash queries
(``intercode/assets/datasets/bash_queries.json``: ``query``, ``gold``) over a small file tree
built by ``intercode/assets/docker/setup_fs.sh`` in an Alpine container whose ``/`` is a git
repository. Its judge runs the gold command in a second container and scores the agent's
container against it: the set of changed paths (``git status``), the checksums of the files
both changed, and a TF-IDF similarity of the last command's output; a task is solved when the
three parts are all full (reward 1).

Here each query becomes a ``shell`` task judged by the domain's own checks:

* the system is ``setup_fs.sh`` run under bash in ``/workspace`` (InterCode's ``/``): the tree
  is ``/workspace/testbed``, and every ``/testbed`` in the query, the setup and the gold is
  rewritten to it (relative ``testbed/`` paths work as they are, from ``/workspace``). Every
  file of the tree is dated 2100-01-01, so the system is the same at import and at each
  verification (an ``ls -l`` prints the same date) and ``find -mtime -1`` still finds the files,
  as it does in InterCode's freshly built image;
* at import the gold runs once in the sandbox; what it printed becomes an ``output`` check
  (``words``: the same words in any order, case and punctuation aside: the view of InterCode's
  TF-IDF, :mod:`.compare`) and the tree it left a ``tree`` check (every path, file content and
  link target under ``/workspace`` but ``$HOME``, ``/workspace/root``: nothing more or less
  changed);
* a query is refused (a one-line reason naming the package file and the row; ``--skip-bad``
  reports it and goes on) when a command of its gold fails with an error (a missing command,
  a malformed ``find -exec``: the gold runs under ``set -e`` at import), when it does not pass
  its own checks on a second run (its result depends on the time or on chance), or when an
  empty answer passes (the gold changes nothing and prints nothing here, so nothing would be
  tested).

The answer is a script (single-turn) or the commands of an episode (``ShellEnv``: the output
judged is the last ``run`` command's). Ids are ``intercode-bash/<n>``, n the query's place in
the file, from 1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from referee.tasks.imports.packaged import PackagedBenchmark
from referee.tasks.imports.rows import OnBadRow, Row, skipping
from referee.tasks.model import Provenance, Task

from .compare import tree_digest
from .draft import BASE_COMMANDS, intro
from .episode import Episode, ShellSpec
from .lines import last_line

__all__ = [
    "BENCHMARK",
    "EXCLUDE",
    "intercode_bash_rows",
    "intercode_bash_tasks",
    "query_task",
    "rewrite_paths",
    "setup_script",
]

BENCHMARK = PackagedBenchmark("intercode-bash", "intercode-bench", ">=0.1.22,<0.2", "0.1.22")
_QUERIES = "intercode/assets/datasets/bash_queries.json"
_SETUP = "intercode/assets/docker/setup_fs.sh"
#: The date every file of the tree carries (see the module docstring).
DATE = "2100-01-01 00:00:00"
#: Top-level names of /workspace the ``tree`` check leaves out: $HOME (InterCode's .gitignore
#: leaves out /root too) and the grader's own files.
EXCLUDE = ("root", ".grader")
TIME_LIMIT_S = 30.0
#: What the multi-turn environment's ``run`` tool allows (InterCode allows anything): the
#: domain's base commands and every program the golds use (``sh`` too: a gold runs
#: ``find -exec sh -c``).
COMMANDS = sorted(
    set(BASE_COMMANDS)
    | {"awk", "basename", "cp", "date", "diff", "dirname", "gzip", "jq", "ln", "md5sum", "mv",
       "paste", "readlink", "realpath", "rm", "sed", "sh", "tar", "tee", "touch", "xargs"}
)  # fmt: skip
_TESTBED = re.compile(r"(?<![\w./-])/testbed\b")


def rewrite_paths(text: str) -> str:
    """InterCode's ``/testbed`` as it is here, ``/workspace/testbed``.

    >>> rewrite_paths("find /testbed -type f; ls testbed/ /testbeds/x")
    'find /workspace/testbed -type f; ls testbed/ /testbeds/x'
    """
    return _TESTBED.sub("/workspace/testbed", text)


def setup_script() -> str:
    """The grader's setup: InterCode's ``setup_fs.sh`` under bash in /workspace, then the
    tree's date fixed (see the module docstring)."""
    script = BENCHMARK.file(_SETUP).read_text(encoding="utf-8")
    return (
        # Alpine's sh understands setup_fs.sh's `echo -e`; dash prints the -e, bash does not.
        f"bash -s <<'INTERCODE_SETUP'\n{rewrite_paths(script).rstrip()}\nINTERCODE_SETUP\n"
        f"find testbed -exec touch -h -d '{DATE}' {{}} +\n"
    )


def intercode_bash_rows() -> Iterator[Row]:
    """The queries as rows (``query``, ``gold``), each naming the package file and its place."""
    path = BENCHMARK.file(_QUERIES)
    for n, item in enumerate(json.loads(path.read_text(encoding="utf-8")), 1):
        yield Row(str(path), n, item if isinstance(item, dict) else {"query": item}, False)


def _prompt(query: str) -> str:
    return (
        f"{intro()}\n\nA file tree is at /workspace/testbed. {rewrite_paths(query).strip()}\n\n"
        "Answer with a shell script (it runs with /bin/sh in /workspace). Where the task asks "
        "for information, print it: what the script prints is compared with the expected "
        "output word by word (order, case and punctuation aside). Files are compared with the "
        "expected ones: change what the task asks, nothing else."
    )


def query_task(row: Row, split: str, checks: list[dict[str, Any]], setup: str) -> Task:
    """The task of one query with the grader's ``checks`` and ``setup`` (not yet checked)."""
    gold = rewrite_paths(row.get("gold", str))
    return Task.create(
        name=f"intercode-bash/{row.number}",
        prompt=_prompt(row.get("query", str)),
        domain="shell",
        kind="shell",
        answer_format="tool-state",
        split=split,
        payload={
            "family": "intercode-bash",
            "files": [],
            "manifest": {"commands": COMMANDS, "writable": ["testbed"]},
        },
        hidden={
            "setup": setup,
            "checks": checks,
            "reference": gold,
            "timeout_s": TIME_LIMIT_S,
            "command_timeout_s": TIME_LIMIT_S,
            "setup_timeout_s": TIME_LIMIT_S,
        },
        provenance=Provenance(
            source="intercode-bash",
            unit=f"intercode-bash:{row.number}",
            versions={BENCHMARK.distribution: BENCHMARK.version()},
        ),
    )


def expected_checks(verifier: Any, row: Row, draft: Task) -> list[dict[str, Any]]:
    """Run the gold once on a fresh system and make its ``output`` and ``tree`` checks; a
    :class:`~referee.tasks.imports.rows.RowError` on ``gold`` where it fails with an error."""
    spec = ShellSpec.of(draft)
    with Episode(verifier.sandbox, spec, cgroups=verifier.cgroups) as ep:
        # set -e: a gold one of whose commands fails (find's malformed -exec before a
        # redirection that then succeeds) stops with that command's status.
        gold = f"set -e\n{draft.hidden['reference']}"
        r = ep.session.run(gold, timeout_s=spec.timeout_s)
        ep.finish()  # every process killed: the tree holds still
        digest, count = tree_digest(ep.workspace.root, EXCLUDE)
    if r.timed_out:
        raise row.error("gold", f"timed out after {spec.timeout_s:g} s")
    if r.exit_code != 0 and r.stderr.strip():
        raise row.error("gold", f"fails here: exit {r.exit_code}: {last_line(r.stderr)}")
    if r.truncated:
        raise row.error("gold", "prints more than the sandbox keeps of a command's output")
    return [
        {"type": "output", "name": "printed the expected output", "expect": r.stdout,
         "mode": "words"},
        {"type": "tree", "name": "left the expected files", "sha256": digest, "entries": count,
         "exclude": list(EXCLUDE)},
    ]  # fmt: skip


def intercode_bash_tasks(split: str, on_bad_row: OnBadRow | None = None) -> Iterator[Task]:
    """The InterCode bash tasks, each made and checked in the sandbox (see the module
    docstring); the first bad query stops the import unless ``on_bad_row`` takes it."""
    from .verifier import ShellVerifier

    setup = setup_script()
    placeholder = [{"type": "absent", "path": "testbed/.intercode-placeholder"}]
    with ShellVerifier() as verifier:
        for row in intercode_bash_rows():
            with skipping(on_bad_row):
                checks = expected_checks(verifier, row, query_task(row, split, placeholder, setup))
                task = query_task(row, split, checks, setup)
                gold = verifier.verify(task, task.hidden["reference"])
                if gold.infra_error:
                    raise row.error("gold", f"the system could not be built: {gold.infra_error}")
                if not gold.passed:
                    bad = [t for t in gold.tests if t.status != "passed"]
                    failed = "; ".join(f"{t.name}: {t.detail}" for t in bad)
                    raise row.error(
                        "gold", f"does not pass its own checks on a second run ({failed})"
                    )
                if verifier.verify(task, "").passed:
                    raise row.error(
                        "gold", "an empty answer passes (the gold prints and changes nothing here)"
                    )
                yield task
