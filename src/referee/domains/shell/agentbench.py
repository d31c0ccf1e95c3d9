"""The import source ``agentbench-os``: AgentBench's OS-interaction tasks, read from the installed
``inspect-evals`` package (``referee tasks import agentbench-os --out T``).

inspect-evals ships AgentBench OS as two JSON files (``dev``: 26 tasks, ``test``: 119) and the
scripts its scorer stages at scoring time (``data/scripts``). Only those files are read (through
the distribution's file list, :func:`importlib.metadata.distribution`): importing
``inspect_evals`` would pull inspect-ai and its dependencies, which referee does not install
(the extra ``referee[bench-agentbench]`` installs the package ``--no-deps``).

Each record becomes a shell task (``TaskKind.SHELL``) judged the way inspect-evals' scorer
(``agent_bench_os_scorer.is_answer_correct``) judges it, in the sandbox:

* ``match``: the submission must equal the string ``match`` (``str(match) == str(submission)``);
* ``check: [null, {"file": "check/X.py"}]``: the ``example`` command is run in the final system
  (in the home directory) and its stripped output is the expected answer; the package's own
  comparison script ``check/X.py`` is run as ``python3 X.py SUBMISSION EXPECTED``; exit 0 passes.
  (For a dev record with a ``match`` too, inspect-evals compares with ``match``, a count taken in
  its own Docker image, wrong for the sandbox's system: the example decides here.)
* ``check: {"file": "checking/N.sh"}`` or ``{"code": ...}``: the package's check script (or the
  command) is run in the home directory; exit 0 passes (a task that changes the system).

The submission is what the agent writes to ``/workspace/answer.txt`` (its trailing newlines
dropped, as ``$(cat ...)`` does): inspect-evals takes it from the agent's last message instead;
a shell task has no message to read, only the system it leaves behind.

Paths: inspect-evals moves ``/root`` and ``/usr`` to ``/home/agent`` (its
``change_path_to_agent_home``); here ``/home/agent`` is the sandbox's ``$HOME``,
``/workspace/root``, the same for the setup, the agent and the checks; the rest of ``/home``
and ``/tmp`` move into the system's root too (``/workspace/home``, ``/workspace/tmp``): the
sandbox's own are not writable, or not the same in each session.

The gold answer: the task's ``example`` (its script, or ``example/N.sh``) writing its output to
the answer file, or ``match`` written there. Every task is validated at import like a
``shell-rows`` row (gold passes, an empty answer fails); what cannot be reproduced is refused
with a one-line reason (``--skip-bad`` reports it and goes on):

* an ``init`` that runs a script of the AgentBench repository (``init/*.sh``): inspect-evals
  clones that repository from GitHub when it builds the image; the package does not ship it;
* tasks whose gold does not pass in the sandbox, each with the failure: real users
  (``useradd``, ``groupadd``: one sandbox user, no root), ``apt-get`` in the init, a write to
  ``/``, a command the gold installs in ``/usr/local/bin`` (read-only here), and answers that
  differ between the agent's session and the check's (counting processes: the agent's are dead
  when the check runs; ``ulimit -u``; the host's ``/var/log``, not in the sandbox).
  (inspect-evals 0.26.0: 114 of 145 imported; ``bench/RESULTS.md`` section 35.)
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.tasks.imports.rows import OnBadRow, Row, skipping
from referee.tasks.model import Task

__all__ = ["ANSWER_FILE", "SUBSETS", "agentbench_os_tasks", "load_records", "record_row"]

#: The file the agent writes its answer to (a question's task); the check reads it.
ANSWER_FILE = "/workspace/answer.txt"
#: The split files inspect-evals ships.
SUBSETS = {"dev": "agent_bench_os.json", "test": "agent_bench_os_test.json"}
_DATA = "inspect_evals/agent_bench/data"
_HOME = "/workspace/root"
#: ``/home`` itself (other users' homes, a task's folders there): the sandbox's is not writable,
#: so it moves into the system's root at /workspace, as the home does.
_OTHER_HOMES = re.compile(r"(?<![\w./])/home(?=/|\b|$)")
#: ``/tmp`` too: each session of the sandbox (setup, agent, check) has its own.
_TMP = re.compile(r"(?<![\w./])/tmp(?=/|\b|$)")
_PACKAGE = "inspect-evals"


def _data_dir() -> Path:
    try:
        dist = distribution(_PACKAGE)
    except PackageNotFoundError:
        raise ConfigError(
            "agentbench-os reads inspect-evals' data: pip install 'referee[bench-agentbench]' "
            "(it installs inspect-evals without its dependencies)"
        ) from None
    path = Path(str(dist.locate_file(_DATA)))
    if not (path / SUBSETS["test"]).is_file():
        raise ConfigError(f"inspect-evals {dist.version} has no AgentBench OS data at {path}")
    return path


def load_records(subset: str) -> list[dict[str, Any]]:
    """The records of one subset (``dev`` or ``test``), as inspect-evals ships them."""
    if subset not in SUBSETS:
        raise ConfigError(f"agentbench-os subset must be dev or test, got {subset!r}")
    records: list[dict[str, Any]] = json.loads((_data_dir() / SUBSETS[subset]).read_text())
    return records


def _home(value: Any) -> Any:
    """inspect-evals' path mapping (``/root``, ``/usr`` to ``/home/agent``), then its home to
    the sandbox's."""
    if isinstance(value, dict):
        return {k: _home(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_home(v) for v in value]
    if isinstance(value, str):
        value = value.replace("/root", "/home/agent").replace("/usr", "/home/agent")
        value = _OTHER_HOMES.sub("/workspace/home", value.replace("/home/agent", _HOME))
        return _TMP.sub("/workspace/tmp", value)
    return value


def _script(name: str) -> str:
    path = _data_dir() / "scripts" / name
    if not path.is_file():
        raise FileNotFoundError(name)
    return path.read_text(encoding="utf-8")


def _setup(row: Row, record: dict[str, Any]) -> str:
    create = record.get("create")
    init = create.get("init") if isinstance(create, dict) else None
    lines = ["mkdir -p /workspace/home /workspace/tmp", 'cd "$HOME"']
    for step in init if isinstance(init, list) else [init]:
        if step is None:
            continue
        if isinstance(step, dict) and "file" in step:
            raise row.error(
                "create",
                f"its init runs {step['file']} of the AgentBench repository, which inspect-evals "
                "clones from GitHub when it builds the image; the package does not ship it",
            )
        # bash, as inspect-evals' image runs its init (SHELL ["/bin/bash", "-l", "-c"])
        if isinstance(step, dict) and "code" in step:
            lines.append(f"bash <<'AGENTBENCH_INIT'\n{step['code']}\nAGENTBENCH_INIT")
        elif isinstance(step, str):
            lines.append(f"bash <<'AGENTBENCH_INIT'\n{step}\nAGENTBENCH_INIT")
        else:
            raise row.error("create", f"init step of unknown shape {str(step)[:60]!r}")
    start = record.get("start")
    if isinstance(start, str):
        lines.append(start.rstrip().rstrip("&") + " >/dev/null 2>&1 &")
    return "\n".join(lines)


def _example(row: Row, evaluation: dict[str, Any]) -> str | None:
    example = evaluation.get("example")
    if example is None:
        return None
    if isinstance(example, dict) and "code" in example:
        return str(example["code"])
    if isinstance(example, dict) and "file" in example:
        try:
            # The calculator task (checking/0.sh) lets ``calc`` live in $HOME, not on PATH: the
            # example's /usr/local/bin is not writable here.
            script = _script(str(example["file"])).replace("/usr/local/bin", '"$HOME"')
            return _home(script)  # type: ignore[no-any-return]
        except FileNotFoundError:
            raise row.error("evaluation", f"no script {example['file']!r} in the package") from None
    if isinstance(example, str):
        return example
    raise row.error("evaluation", f"example of unknown shape {str(example)[:60]!r}")


_CHECK = r"""import os, subprocess, sys, tempfile
spec = %(spec)s
os.chdir(os.environ["HOME"])
try:
    with open(%(answer)r, encoding="utf-8", errors="replace") as f:
        submission = f.read().rstrip("\n")
except FileNotFoundError:
    sys.exit("no answer: write it to %(answer)s")
if spec["kind"] == "match":
    ok = submission == spec["match"]
    sys.exit(0 if ok else "answered %%r, not the expected answer" %% submission[:80])
r = subprocess.run(["bash", "-c", spec["example"]], capture_output=True, text=True)
if r.returncode != 0:
    sys.exit("the task's example command failed (exit %%d)" %% r.returncode)
expected = r.stdout.strip()
with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
    f.write(spec["compare"])
c = subprocess.run([sys.executable, f.name, submission, expected], capture_output=True)
os.unlink(f.name)
sys.exit(0 if c.returncode == 0 else "answered %%r, not the expected answer" %% submission[:80])
"""


def _answer_check(spec: dict[str, Any]) -> str:
    program = _CHECK % {"spec": repr(spec), "answer": ANSWER_FILE}
    return f"python3 - <<'AGENTBENCH_CHECK'\n{program}AGENTBENCH_CHECK\n"


def _state_check(script: str) -> str:
    return f"cd \"$HOME\"\nbash <<'AGENTBENCH_CHECK'\n{script}\nAGENTBENCH_CHECK\n"


def _write_answer(text: str) -> str:
    return f"printf '%s\\n' {shlex.quote(text)} > {ANSWER_FILE}\n"


def _example_answer(example: str) -> str:
    strip = "python3 -c 'import sys; print(sys.stdin.read().strip())'"
    return (
        f"cd \"$HOME\"\nbash <<'AGENTBENCH_EXAMPLE' | {strip} > {ANSWER_FILE}\n"
        f"{example}\nAGENTBENCH_EXAMPLE\n"
    )


def _judging(row: Row, record: dict[str, Any]) -> tuple[str, str, str]:
    """``(check, reference, what)``: the check script, the gold answer and what is asked."""
    evaluation = record.get("evaluation")
    if not isinstance(evaluation, dict):
        raise row.error("evaluation", "missing (every AgentBench OS record has one)")
    check = evaluation.get("check")
    example = _example(row, evaluation)
    if check is None and "match" in evaluation:
        match = str(evaluation["match"])
        return _answer_check({"kind": "match", "match": match}), _write_answer(match), "answer"
    if isinstance(check, list) and len(check) >= 2 and isinstance(check[1], dict):
        if check[0] is not None or check[1].get("language") != "python":
            raise row.error("evaluation", f"check of unknown shape {str(check)[:60]!r}")
        name = str(check[1].get("file"))
        try:
            compare = _script(name)
        except FileNotFoundError:
            raise row.error("evaluation", f"no comparison script {name!r} in the package") from None
        # inspect-evals' scorer takes a dev record's ``match`` as the expected answer when it has
        # one; but ``match`` was counted in its Docker image (43 groups, 21 users...), not in
        # the sandbox's system, so the example, run in the final system, decides here (as it
        # does for every test record).
        if example is not None:
            spec = {"kind": "script", "example": example}
            reference = _example_answer(example)
        elif "match" in evaluation:
            spec = {"kind": "script", "example": f"echo {shlex.quote(str(evaluation['match']))}"}
            reference = _write_answer(str(evaluation["match"]))
        else:
            raise row.error("evaluation", "a comparison script with no example to compare to")
        spec["compare"], spec["script"] = compare, name
        return _answer_check(spec), reference, "answer"
    if isinstance(check, dict) and ("file" in check or "code" in check):
        if "file" in check:
            try:
                script = _script(str(check["file"]))
            except FileNotFoundError:
                raise row.error("evaluation", f"no check script {check['file']!r}") from None
        else:
            script = str(check["code"])
        if example is None:
            raise row.error("evaluation", "a state check with no example solution")
        return _state_check(script), f'cd "$HOME"\n{example}\n', "state"
    if isinstance(check, list) and len(check) == 1 and isinstance(check[0], str):
        if example is None:
            raise row.error("evaluation", "a state check with no example solution")
        return _state_check(check[0]), f'cd "$HOME"\n{example}\n', "state"
    raise row.error("evaluation", f"of unknown shape {str(evaluation)[:80]!r}")


_ANSWER_NOTE = (
    "Answer the question by writing only the answer to the file {file} (for example "
    "`echo 3 > {file}`); that file is what is judged."
)


def record_row(subset: str, record: dict[str, Any], where: str) -> dict[str, Any]:
    """The ``shell-rows`` row of one AgentBench OS record (paths mapped, scripts inlined); a
    :class:`RowError` naming the record if it cannot be reproduced here."""
    number = int(record.get("id", -1))
    row = Row(where, number, record, by_line=False)
    record = _home(record)
    description = record.get("description")
    if not isinstance(description, str) or not description.strip():
        raise row.error("description", "missing")
    setup = _setup(row, record)
    check, reference, what = _judging(row, record)
    prompt = f"{description}\n\nYour home directory ($HOME) is {_HOME}."
    if what == "answer":
        prompt += " " + _ANSWER_NOTE.format(file=ANSWER_FILE)
    return {
        "id": f"{subset}-{number}",
        "prompt": prompt,
        "setup": setup,
        "check": check,
        "reference": reference,
        "time_limit_s": 60,
        "check_time_limit_s": 60,
        "setup_time_limit_s": 60,
    }


def agentbench_os_tasks(
    split: str = "heldout", subset: str | None = None, on_bad_row: OnBadRow | None = None
) -> Iterator[Task]:
    """AgentBench OS as shell tasks (both subsets, or ``subset``), each validated in the sandbox
    (gold passes, an empty answer fails); a record that cannot be reproduced is a
    :class:`RowError` (handed to ``on_bad_row`` and skipped when one is given)."""
    from .imports import validated_tasks

    version = distribution(_PACKAGE).version
    rows: list[Row] = []
    for name in [subset] if subset else list(SUBSETS):
        for record in load_records(name):
            where = f"inspect-evals {version} agent_bench/{SUBSETS[name]}"
            with skipping(on_bad_row):
                data = record_row(name, record, where)
                rows.append(Row(where, int(record.get("id", -1)), data, by_line=False))
    yield from validated_tasks(
        rows,
        split,
        on_bad_row,
        source="agentbench-os",
        versions={_PACKAGE: version},
    )
