"""issue 20, QA findings 6, 7 and 13: a command's result goes to stdout (progress and log to
stderr; --json keeps stdout machine-readable only), and verify refuses an empty samples file."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def gold(tmp_path: Path) -> tuple[Path, Path]:
    tasks = tmp_path / "t.jsonl"
    made = _run("tasks", "generate", "list-ops", "--count", "3", "--out", str(tasks))
    assert made.exit_code == 0, made.output
    samples = tmp_path / "gold.jsonl"
    r = _run("tasks", "gold", str(tasks))
    samples.write_text(r.stdout)
    return tasks, samples


def test_verify_prints_its_summary_on_stdout_and_with_json_only_verdicts(gold):
    tasks, samples = gold
    r = _run("verify", "--tasks", str(tasks), "--samples", str(samples))
    assert r.exit_code == 0, r.output
    assert "3 samples: 3 passed" in r.stdout and "samples:" not in r.stderr
    r = _run("verify", "--tasks", str(tasks), "--samples", str(samples), "--json")
    assert r.exit_code == 0, r.output
    assert all(line.startswith("{") for line in r.stdout.splitlines())
    assert "3 samples: 3 passed" in r.stderr


def test_verify_refuses_an_empty_samples_file(gold, tmp_path):
    tasks, _ = gold
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = _run("verify", "--tasks", str(tasks), "--samples", str(empty))
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and lines[0].startswith(f"referee: --samples {empty} holds no samples")


def test_doctor_lists_the_layers_on_stdout():
    r = _run("doctor")
    assert r.exit_code == 0, r.output
    assert "fast path:" in r.stdout and "fast path:" not in r.stderr


def test_tasks_split_report_is_on_stdout(gold):
    tasks, _ = gold
    r = _run("tasks", "split", str(tasks), "--by", "structure")
    assert "leaking units" in r.stdout and "leaking units" not in r.stderr


def test_verify_exits_1_when_no_sample_reached_a_verdict(tmp_path, monkeypatch):
    # issue 33: every sample an infrastructure error (here: the task's snapshot is in no
    # store) is no result, as `eval` says; the summary is still written.
    from referee.tasks.artifacts import ArtifactStore
    from referee.tasks.model import Task, write_tasks

    digest = ArtifactStore(str(tmp_path / "made")).put_files({"a.py": b"X = 1\n"})
    task = Task.create(
        name="repo/t1",
        kind="repo-patch",
        prompt="fix it",
        payload={"repo": {"snapshot": digest, "store": str(tmp_path / "gone")}},
        hidden={"fail_to_pass": ["test_a.py::test_a"]},
        answer_format="patch",
    )
    tasks, samples = tmp_path / "t.jsonl", tmp_path / "s.jsonl"
    write_tasks(tasks, [task])
    samples.write_text('{"task_id": "repo/t1", "completion": ""}\n')
    monkeypatch.delenv("REFEREE_ARTIFACTS", raising=False)
    r = _run("verify", "--tasks", str(tasks), "--samples", str(samples))
    assert r.exit_code == 1, r.output
    assert "1 samples: 0 passed, 0 failed, 1 infra errors" in r.stdout
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("referee:")]
    assert len(errors) == 1 and "no sample reached a verdict: all 1 were infra" in errors[0]


def test_a_reader_that_closes_the_pipe_early_ends_the_command_quietly_with_0(tmp_path):
    # issue 33: `referee tasks list FILE | head -1` exited 1 (an infrastructure failure).
    import os
    import subprocess
    import sys

    from referee.tasks.model import Task, write_tasks

    many = [
        Task.create(name=f"t/{i:05d}-{'x' * 60}", kind="custom", prompt="p", answer_format="text")
        for i in range(3000)
    ]  # ~250 kB of rows: more than a pipe holds, so the writer meets the closed end
    path = tmp_path / "many.jsonl"
    write_tasks(path, many)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.Popen(
        [sys.executable, "-m", "referee", "tasks", "list", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert p.stdout is not None and p.stderr is not None
    assert p.stdout.readline().startswith(b"t/00000-")
    p.stdout.close()  # as `head -1` does
    err = p.stderr.read()
    assert p.wait(timeout=120) == 0, err
    assert err == b""


def test_a_rich_listing_whose_reader_closes_early_ends_quietly_with_0():
    # issue 33, second walk: `referee doctor | head -1` exited 1 with no message (rich's console
    # exits 1 on a broken pipe); its listing goes through referee.cli.console.Out now.
    import os
    import subprocess
    import sys

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.Popen(
        [sys.executable, "-m", "referee", "doctor"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert p.stdout is not None and p.stderr is not None
    assert p.stdout.readline()  # the first layer's line
    p.stdout.close()  # as `head -1` does, before the rest of the listing is written
    err = p.stderr.read()
    assert p.wait(timeout=120) == 0, err
    assert err == b""


def test_synth_writes_its_report_on_stdout_and_progress_on_stderr(tmp_path, monkeypatch):
    # issue 33: the README says "the result on stdout"; the tables and summary went to stderr.
    from collections import Counter

    import referee.synth.pipeline as pipeline

    def fake(source, *, progress, **kw):
        progress("intake", 1, 1)
        return pipeline.SynthReport(
            source=source,
            candidates_by_kind=Counter(bugfix=3),
            kept_by_kind=Counter(bugfix=0),
            rejected=Counter({"no test fails": 3}),
        )

    monkeypatch.setattr(pipeline, "synthesize", fake)
    out = tmp_path / "tasks.jsonl"
    r = _run("synth", str(tmp_path), "--out", str(out), "--kinds", "bugfix")
    assert r.exit_code == 0, r.output
    assert "no test fails" in r.stdout and "0 tasks ->" in r.stdout
    assert "synth: intake 1/1" in r.stderr
    assert "no test fails" not in r.stderr and "tasks ->" not in r.stderr


def test_redteam_refuses_an_unknown_verifier_naming_every_accepted_one():
    # issue 33: the refusal listed only the domains' corpora, not function, pytest, program.
    from referee.domains import corpus_names

    r = _run("redteam", "--verifier", "nosuch")
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and "'nosuch'" in lines[0]
    for name in ("function", "pytest", "program", *corpus_names()):
        assert name in lines[0], name


@pytest.mark.parametrize(
    ("command", "keys"),
    [
        (("tasks", "families"), {"family", "domain", "makes"}),
        (("tasks", "sources"), {"source", "reads_file", "what"}),
        (
            ("domains", "list"),
            {"domain", "version", "distribution", "description", "families", "kinds", "env",
             "corpus", "error"},
        ),
    ],
)  # fmt: skip
def test_listings_take_json_one_object_per_line(command, keys):
    # issue 33, second walk: docs/getting-started.md says listings take --json (one object per
    # line); tasks families, tasks sources and domains list refused it.
    import json

    r = _run(*command, "--json")
    assert r.exit_code == 0, r.output
    objects = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(objects) > 3
    assert all(set(o) == keys for o in objects)
    name = {"families": "family", "sources": "source", "list": "domain"}[command[-1]]
    plain = _run(*command)
    assert [o[name] for o in objects] == [line.split("\t")[0] for line in plain.stdout.splitlines()]
