"""The ``shell-rows`` import: good rows become validated tasks; a malformed row, a reference
that fails or a check that passes on nothing is an error naming file, row and field, and the
CLI writes nothing then."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.errors import TaskError
from referee.tasks.sources import load_source

GOOD = {
    "id": "disk-1",
    "prompt": "Compress var/log/old.log with gzip (keep the name old.log.gz).",
    "setup": "mkdir -p var/log && printf 'a\\nb\\n' > var/log/old.log",
    "check": "test -f var/log/old.log.gz && test ! -e var/log/old.log && "
    '[ "$(zcat var/log/old.log.gz)" = "$(printf \'a\\nb\')" ]',
    "reference": "gzip var/log/old.log",
    "manifest": {"writable": ["var/log"], "commands": ["gzip"]},
}


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_good_rows_become_shell_tasks_judged_by_their_check(tmp_path, shell_verifier):
    rows = [GOOD, {**GOOD, "id": "disk-2", "manifest": None}]
    tasks = list(load_source("shell-rows", "train", write_rows(tmp_path / "r.jsonl", rows)))
    assert [t.id for t in tasks] == ["shell-rows/disk-1", "shell-rows/disk-2"]
    assert tasks[0].kind.value == "shell" and tasks[0].payload["manifest"]["commands"] == ["gzip"]
    assert "gzip var/log/old.log" not in tasks[0].user_prompt + str(tasks[0].payload)
    assert shell_verifier.verify(tasks[0], "gzip var/log/old.log").passed
    assert not shell_verifier.verify(tasks[0], "touch var/log/old.log.gz").passed


@pytest.mark.parametrize(
    ("row", "named"),
    [
        ({k: v for k, v in GOOD.items() if k != "check"}, r"r\.jsonl:2: field 'check': missing"),
        ({**GOOD, "manifest": {"write": ["x"]}}, r"r\.jsonl:2: field 'manifest': unknown key"),
        ({**GOOD, "reference": "true"}, r"r\.jsonl:2: field 'reference': does not pass"),
        ({**GOOD, "check": "true"}, r"r\.jsonl:2: field 'check': passes on an empty answer"),
    ],
)
def test_a_bad_row_is_an_error_naming_file_row_and_field(tmp_path, row, named):
    path = write_rows(tmp_path / "r.jsonl", [GOOD, row])
    with pytest.raises(TaskError, match=named):
        list(load_source("shell-rows", "train", path))


def test_the_cli_writes_nothing_when_a_row_is_bad(tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app

    path = write_rows(tmp_path / "r.jsonl", [GOOD, {**GOOD, "reference": "true"}])
    out = tmp_path / "tasks.jsonl"
    r = CliRunner().invoke(app, ["tasks", "import", "shell-rows", str(path), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "field 'reference'" in r.output and not out.exists()


# ---- rows that express real tasks: limits, users, processes, one $HOME -----------------------


def only_task(tmp_path: Path, row: dict) -> object:
    [task] = load_source("shell-rows", "train", write_rows(tmp_path / "r.jsonl", [row]))
    return task


def test_users_are_in_passwd_and_group_and_home_is_one_path_for_agent_and_check(
    tmp_path, shell_verifier
):
    row = {
        "id": "users-1",
        "prompt": "Leave the word hi in ~/note.",
        "users": [{"name": "alice", "uid": 1000}, {"name": "bob", "groups": ["staff"]}],
        "check": 'grep -qx hi ~/note && [ "$HOME" = /workspace/root ] '
        '&& [ "$(stat -c %U ~/note)" = alice ] && id -nG bob | grep -qw staff '
        '&& [ "$(getent passwd bob | cut -d: -f6)" = /workspace/home/bob ] '
        "&& test -d /workspace/home/bob",
        "reference": 'echo hi > "$HOME/note"',
    }
    task = only_task(tmp_path, row)
    assert shell_verifier.verify(task, "cd && echo hi > note").passed
    assert not shell_verifier.verify(task, "echo hi > /tmp/note").passed


def test_chown_to_a_user_other_than_the_agents_fails_with_einval(tmp_path, shell_verifier):
    row = {
        "id": "users-2",
        "prompt": "Give f to bob.",
        "users": [{"name": "alice", "uid": 1000}, {"name": "bob"}],
        "setup": "touch f",
        "check": '[ "$(stat -c %U f)" = bob ]',
        "reference": "chown alice f",  # the one chown that works: to the agent's own user
    }
    path = write_rows(tmp_path / "r.jsonl", [row])
    with pytest.raises(TaskError, match=r"field 'reference': does not pass its check \(check "):
        list(load_source("shell-rows", "train", path))
    from referee.domains.shell.imports import row_task
    from referee.tasks.imports.rows import Row

    task = row_task(Row("r", 1, {**row, "check": "grep -q 'Invalid argument' err"}))
    assert shell_verifier.verify(task, "chown bob f 2>err").passed  # EINVAL: one uid is mapped
    assert not shell_verifier.verify(task, "chown alice f 2>err").passed  # a no-op, no error


def test_processes_are_checked_before_the_kill(tmp_path, shell_verifier):
    row = {
        "id": "proc-1",
        "prompt": "Stop `sleep 1234` and start `sleep 4321` in the background.",
        # The setup returns only once the job has exec'd: on a busy machine a backgrounded
        # subshell can still be a copy of sh when the answer's pgrep looks for it.
        "setup": "sleep 1234 >/dev/null 2>&1 & until pgrep -x -f 'sleep 1234' >/dev/null; do :; done",
        "check": "true",
        "processes": [
            {"pattern": "^sleep 1234$", "running": False},
            {"pattern": "^sleep 4321$", "running": True},
        ],
        "reference": "kill $(pgrep -x -f 'sleep 1234'); sleep 4321 >/dev/null 2>&1 &",
    }
    task = only_task(tmp_path, row)
    assert not shell_verifier.verify(task, "kill $(pgrep -x -f 'sleep 1234')").passed
    v = shell_verifier.verify(task, "sleep 4321 >/dev/null 2>&1 &")
    assert [t.name for t in v.tests if t.status == "failed"] == [
        "process '^sleep 1234$' not running"
    ]


def test_a_reference_past_its_time_limit_is_the_reference_timing_out(tmp_path):
    row = {**GOOD, "time_limit_s": 2, "reference": "sleep 6; gzip var/log/old.log"}
    with pytest.raises(TaskError, match=r"r\.jsonl:1: field 'reference': timed out after 2 s"):
        only_task(tmp_path, row)


@pytest.mark.parametrize(
    ("field", "value"),
    [("time_limit_s", 0), ("check_time_limit_s", 121), ("setup_time_limit_s", True)],
)
def test_time_limits_are_bounded(tmp_path, field, value):
    path = write_rows(tmp_path / "r.jsonl", [{**GOOD, field: value}])
    with pytest.raises(TaskError, match=rf"field '{field}': must be a number of seconds in 1\.\."):
        list(load_source("shell-rows", "train", path))


@pytest.mark.parametrize(
    ("row", "named"),
    [
        ({"users": [{"name": "Alice"}]}, r"field 'users': entry 0: name 'Alice' must be"),
        ({"users": [{"name": "a", "uid": 0}]}, r"field 'users': entry 0 \(a\): uid must be"),
        ({"users": [{"name": "a", "home": "/home/a"}]}, r"field 'users': .*under /workspace"),
        ({"processes": [{"pattern": "("}]}, r"field 'processes': entry 0: expected"),
        ({"processes": [{"pattern": "(", "running": True}]}, r"field 'processes': .*not a regex"),
    ],
)
def test_bad_users_and_processes_name_the_field(tmp_path, row, named):
    with pytest.raises(TaskError, match=named):
        list(
            load_source("shell-rows", "train", write_rows(tmp_path / "r.jsonl", [{**GOOD, **row}]))
        )


def test_a_check_timeout_and_a_failing_check_say_what_happened(tmp_path, shell_verifier):
    from referee.domains.shell.imports import row_task
    from referee.tasks.imports.rows import Row

    slow = row_task(Row("r", 1, {**GOOD, "check": "sleep 5", "check_time_limit_s": 1}))
    [t] = [t for t in shell_verifier.verify(slow, "").tests if t.name == "check script"]
    assert t.detail == "check timed out after 1 s (and 4 s)"
    loud = row_task(
        Row("r", 1, {**GOOD, "check": "echo no >&2; echo \x1b[31mboom\x1b[0m >&2; exit 3"})
    )
    [t] = [t for t in shell_verifier.verify(loud, "").tests if t.name == "check script"]
    assert t.detail == "exit 3: boom"


def test_a_setup_error_is_one_line_without_colour_naming_row_and_field(tmp_path):
    setup = (
        "printf 'Reading package lists...\\n\\033[1;31mE: \\033[0mUnable to locate package foo"
        "\\n\\n' >&2; exit 100"
    )
    path = write_rows(tmp_path / "r.jsonl", [{**GOOD, "setup": setup}])
    with pytest.raises(TaskError) as e:
        list(load_source("shell-rows", "train", path))
    assert str(e.value) == (
        f"{path}:1: field 'setup': failed: exit 100: E: Unable to locate package foo"
    )


def test_skipping_bad_rows_reports_each_and_keeps_the_good(tmp_path):
    from referee.tasks.sources import iter_source

    rows = [GOOD, {**GOOD, "id": "bad", "reference": "true"}, {**GOOD, "id": "disk-3"}]
    path = write_rows(tmp_path / "r.jsonl", rows)
    bad: list[Exception] = []
    tasks = list(iter_source("shell-rows", "train", path, on_bad_row=bad.append))
    assert [t.id for t in tasks] == ["shell-rows/disk-1", "shell-rows/disk-3"]
    assert [str(e) for e in bad] == [
        f"{path}:2: field 'reference': does not pass its check (check script: exit 1)"
    ]


def test_the_example_row_on_the_shell_page_imports(tmp_path):
    import re

    page = Path(__file__).parents[3] / "docs" / "domains" / "shell.md"
    row = json.loads(re.findall(r"```json\n(.*?)```", page.read_text(), re.S)[-1])
    assert {"users", "processes", "time_limit_s", "check_time_limit_s"} <= set(row)
    assert only_task(tmp_path, row).id == "shell-rows/svc-1"


def test_the_rows_limits_reach_the_spec_the_verifier_and_the_environment_read():
    from referee.domains.shell.episode import ShellSpec
    from referee.domains.shell.imports import row_task
    from referee.tasks.imports.rows import Row

    row = {**GOOD, "time_limit_s": 45, "check_time_limit_s": 7, "setup_time_limit_s": 90}
    spec = ShellSpec.of(row_task(Row("r", 1, row)))
    assert (spec.timeout_s, spec.command_timeout_s, spec.setup_timeout_s) == (45.0, 45.0, 90.0)
    assert spec.checks[0]["timeout_s"] == 7.0 and spec.accounts == ()
