"""Harbor task directories: read into shell tasks (plain Debian/Ubuntu images only, refused
otherwise in one line naming why), written back by ``tasks export --format harbor``, and the
round trip keeps every verdict. Harbor's own loader (harbor 0.25.0, in its Python 3.12 venv,
scripts/bootstrap-harbor-venv.sh) accepts what referee writes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from referee.domains.shell.harbor_export import export_harbor, harbor_files
from referee.domains.shell.harbor_format import map_paths, read_dockerfile
from referee.errors import ConfigError, TaskError
from referee.tasks.imports.rows import RowError
from referee.tasks.model import Task
from referee.tasks.sources import load_source

from .test_imports import GOOD, write_rows

FIXTURE = Path(__file__).parents[2] / "fixtures" / "harbor" / "count-lines"
HARBOR_PYTHON = Path(__file__).parents[3] / ".venvs" / "harbor" / "bin" / "python"


def test_a_plain_ubuntu_dockerfile_becomes_packages_and_setup_steps():
    plan = read_dockerfile((FIXTURE / "environment" / "Dockerfile").read_text())
    assert plan.image == "ubuntu:24.04" and plan.packages == ["grep", "coreutils"]
    assert plan.workdir == "/app"
    assert plan.steps == [
        ("copy", "words.txt", "/app/data/words.txt"),
        ("run", 'echo "ready" > /app/status', "/app"),
    ]


@pytest.mark.parametrize(
    ("dockerfile", "why"),
    [
        ("FROM python:3.12-slim\n", r"'python:3.12-slim' is not plain Debian or Ubuntu"),
        ("FROM debian AS a\nFROM debian\n", "multi-stage"),
        ("FROM debian\nRUN curl -L x | sh\n", "downloads at build time"),
        ("FROM debian\nRUN pip install numpy\n", "downloads at build time"),
        ("FROM debian\nRUN apt-get install -y jq=1.6\n", "pinned or not a plain package name"),
        ("FROM debian\nUSER app\n", r"instruction 2 \(USER\): not supported"),
        ('FROM debian\nCMD ["nginx", "-g"]\n', "starts a program with the container"),
        ("FROM debian\nADD https://x/y.tgz /app/\n", "ADD of a URL downloads"),
        ("RUN true\n", r"instruction 1 \(RUN\)|no FROM"),
    ],
)
def test_dockerfiles_that_cannot_be_built_here_are_refused_naming_why(dockerfile, why):
    with pytest.raises(TaskError, match=why):
        read_dockerfile(dockerfile)


def test_harbor_paths_move_to_the_sandbox_and_others_stay():
    text = "cat /app/x; ls /tests/a.py > /logs/verifier/r; cd /app; echo /apple /tests_x a/app"
    assert map_paths(text, "/app") == (
        "cat /workspace/x; ls /tmp/harbor/tests/a.py > /tmp/harbor/logs/verifier/r; "
        "cd /workspace; echo /apple /tests_x a/app"
    )


def test_the_fixture_imports_and_is_judged_by_its_test_sh(shell_verifier):
    [task] = list(load_source("harbor", "heldout", FIXTURE))
    assert task.id == "harbor/referee__count-lines" and task.kind.value == "shell"
    assert "canary" not in task.user_prompt and "/workspace/data/words.txt" in task.user_prompt
    assert task.hidden["timeout_s"] == 120.0 and task.hidden["checks"][0]["timeout_s"] == 60.0
    assert "grep -c a" not in task.user_prompt  # the tests stay hidden
    verdict = lambda answer: shell_verifier.verify(task, answer).passed  # noqa: E731
    assert verdict(task.hidden["reference"]) and verdict("echo 3 > count.txt")
    assert not verdict("") and not verdict("echo 4 > count.txt")
    assert not verdict("echo 3 > count.txt; rm status")  # the image's RUN step matters
    forged = "mkdir -p /tmp/harbor/logs/verifier; echo 1 > /tmp/harbor/logs/verifier/reward.txt"
    assert not verdict(forged)  # a planted reward is removed before the tests run


def _variant(tmp_path: Path, name: str, edit) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURE, target)
    edit(target)
    return target


def _write(rel: str, text: str):
    return lambda d: (d / rel).write_text(text)


@pytest.mark.parametrize(
    ("name", "edit", "why"),
    [
        ("py", _write("environment/Dockerfile", "FROM python:3.12\n"), "not plain Debian"),
        (
            "pkg",
            _write("environment/Dockerfile", "FROM debian\nRUN apt-get install -y sl-nonesuch\n"),
            r"sl-nonesuch not installed on this machine.*apt-get install sl-nonesuch",
        ),
        ("curl", _write("tests/test.sh", "curl -LsSf https://x | sh\n"), "runs 'curl'"),
        ("nosol", lambda d: (d / "solution" / "solve.sh").unlink(), "solution/solve.sh: missing"),
        (
            "image",
            _write("task.toml", '[environment]\ndocker_image = "ghcr.io/x/y:1"\n'),
            "prebuilt image",
        ),
        ("steps", _write("task.toml", '[[steps]]\nname = "one"\n'), "multi-step"),
        ("wrong", _write("solution/solve.sh", "echo 9 > /app/count.txt\n"), "does not pass"),
    ],
)
def test_a_directory_that_cannot_run_here_is_refused_in_one_line(tmp_path, name, edit, why):
    task_dir = _variant(tmp_path, name, edit)
    with pytest.raises(TaskError, match=why) as raised:
        list(load_source("harbor", "heldout", task_dir))
    assert str(task_dir) in str(raised.value) or "harbor/" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_skip_bad_imports_the_good_directories_and_reports_the_others(tmp_path):
    root = tmp_path / "suite"
    root.mkdir()
    shutil.copytree(FIXTURE, root / "a-good")
    _variant(root, "b-python", _write("environment/Dockerfile", "FROM python:3.12\n"))
    bad: list[RowError] = []
    tasks = list(load_source("harbor", "train", root, on_bad_row=bad.append))
    assert [t.id for t in tasks] == ["harbor/referee__count-lines"]
    assert len(bad) == 1 and "b-python" in str(bad[0]) and "python:3.12" in str(bad[0])


def _shell_rows_task(tmp_path: Path) -> Task:
    [task] = load_source("shell-rows", "train", write_rows(tmp_path / "r.jsonl", [GOOD]))
    return task


def test_only_tasks_judged_by_check_scripts_have_a_harbor_form(tmp_path, family_tasks):
    files = harbor_files(_shell_rows_task(tmp_path))
    assert sorted(files) == [
        "environment/Dockerfile", "environment/setup.sh", "instruction.md",
        "solution/reference.sh", "solution/solve.sh", "task.toml", "tests/check.sh",
        "tests/test.sh",
    ]  # fmt: skip
    assert "gzip var/log/old.log" in files["solution/reference.sh"]
    structured = next(
        t for t in family_tasks.values() if {c["type"] for c in t.hidden["checks"]} != {"script"}
    )
    with pytest.raises(ConfigError, match="no Harbor form"):
        harbor_files(structured)
    done = export_harbor([structured.model_copy(update={"split": "train"})], tmp_path / "out")
    assert done.written == 0 and done.left_out == {"no Harbor form": 1}


def test_export_then_import_keeps_every_verdict(tmp_path, shell_verifier):
    rows = _shell_rows_task(tmp_path)
    [fixture] = load_source("harbor", "train", FIXTURE)
    out = tmp_path / "harbor"
    assert export_harbor([rows, fixture], out).written == 2
    back = {t.provenance.unit: t for t in load_source("harbor", "train", out)}
    answers = {
        rows.id: [
            rows.hidden["reference"],
            "",
            "touch var/log/old.log.gz",
            "gzip -k var/log/old.log",
        ],
        fixture.id: [fixture.hidden["reference"], "", "echo 3 > count.txt", "echo 2 > count.txt"],
    }
    for original in (rows, fixture):
        [again] = [t for u, t in back.items() if original.id.replace("/", "__") in u]
        for answer in answers[original.id]:
            first = shell_verifier.verify(original, answer).passed
            assert shell_verifier.verify(again, answer).passed == first, (original.id, answer)
    with pytest.raises(ConfigError, match="exists"):
        export_harbor([rows], out)


@pytest.mark.skipif(
    not HARBOR_PYTHON.exists(),
    reason="no .venvs/harbor (harbor needs Python 3.12): scripts/bootstrap-harbor-venv.sh",
)
def test_harbors_own_loader_accepts_the_exported_directories(tmp_path):
    [fixture] = load_source("harbor", "train", FIXTURE)
    out = tmp_path / "harbor"
    export_harbor([_shell_rows_task(tmp_path), fixture], out)
    check = (
        "import sys, pathlib\nfrom harbor.models.task.task import Task\n"
        "for d in sorted(pathlib.Path(sys.argv[1]).iterdir()):\n"
        "    t = Task(d)\n"
        "    assert t.paths.discovered_test_path and t.paths.discovered_solve_path, d\n"
        "    print(t.name, t.config.agent.timeout_sec, t.config.verifier.timeout_sec)\n"
    )
    result = subprocess.run(
        [str(HARBOR_PYTHON), "-c", check, str(out)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == [
        "harbor__referee__count-lines 120.0 60.0",
        "shell-rows__disk-1 30.0 15.0",
    ]


def test_the_cli_exports_harbor_directories_and_names_the_format(tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app
    from referee.tasks.model import write_tasks

    tasks = tmp_path / "t.jsonl"
    write_tasks(tasks, [_shell_rows_task(tmp_path)])
    out = tmp_path / "dirs"
    result = CliRunner().invoke(
        app, ["tasks", "export", str(tasks), "--format", "harbor", "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert '"rows": 1' in result.stdout and (out / "shell-rows__disk-1" / "task.toml").is_file()
    wrong = CliRunner().invoke(
        app, ["tasks", "export", str(tasks), "--format", "harbour", "--out", str(out)]
    )
    assert wrong.exit_code == 2 and "harbor" in wrong.output
