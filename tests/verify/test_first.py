"""A one-shot ``referee verify``'s first verdict, judged from the raw files before the command
line loads (issue 32): the same verdicts in the same order as the command alone gives, the
first printed before pydantic is imported, and nothing judged early that the reader would read
otherwise."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import referee
from referee.tasks.model import write_tasks
from referee.verify import first
from referee.verify.record import generate_recorded
from referee.verify.samples import gold_samples

SRC = str(Path(referee.__file__).parents[1])


def _files(tmp_path: Path, n: int = 4) -> tuple[Path, Path]:
    tasks = generate_recorded("list-ops", count=n, difficulty=0.0, seed=1)
    task_file, samples = tmp_path / "tasks.jsonl", tmp_path / "samples.jsonl"
    write_tasks(task_file, tasks)
    rows = list(gold_samples(tasks))
    rows[1] = {**rows[1], "completion": "    return None\n"}  # one failure among the passes
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return task_file, samples


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(first).failed == 0


def test_the_first_sample_is_read_from_the_raw_files(tmp_path) -> None:
    tasks, samples = _files(tmp_path)
    sample = first.first_sample(str(tasks), str(samples))
    assert sample is not None
    row = json.loads(samples.read_text().splitlines()[0])
    assert (sample.id, sample.completion) == (row["task_id"], row["completion"])
    assert set(sample.payload) >= {"entry_point", "code_prompt"}
    assert set(sample.hidden) >= {"inputs", "expected"}


@pytest.mark.parametrize(
    "change",
    ["url", "language", "kind", "hash", "version", "missing", "prompt"],
)
def test_what_it_cannot_vouch_for_is_left_to_the_command(tmp_path, change) -> None:
    tasks, samples = _files(tmp_path)
    rows = [json.loads(x) for x in samples.read_text().splitlines()]
    lines = [json.loads(x) for x in tasks.read_text().splitlines()]
    task_path = str(tasks)
    if change == "url":
        task_path = "memory://referee-first/" + tasks.name
    elif change == "language":
        rows[0]["language"] = "python"
    elif change == "missing":
        rows[0]["task_id"] = "no/such-task"
    else:
        task = next(t for t in lines if t["id"] == rows[0]["task_id"])
        if change == "kind":
            task["kind"] = "repo-patch"
        elif change == "hash":
            task["hidden"]["expected"][0] = ["return", 12345]  # tampered: the hash no longer fits
        elif change == "version":
            task["schema_version"] = 3
        elif change == "prompt":
            task["prompt"][0]["extra"] = "x"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tasks.write_text("".join(json.dumps(t) + "\n" for t in lines))
    assert first.first_sample(task_path, str(samples)) is None


def _run(args: list[str], *, entry: str) -> subprocess.CompletedProcess[str]:
    """``args`` through ``python -m referee`` (the early path) or ``referee.cli``'s main (the
    command alone); with the early path, whether pydantic was loaded at the first line on
    stdout goes to stderr's first line."""
    code = {
        "early": (
            "import sys\n"
            "class Out:\n"
            "    seen = False\n"
            "    def __init__(self, real): self.real = real\n"
            "    def write(self, s):\n"
            "        if not Out.seen and s:\n"
            "            Out.seen = True\n"
            "            sys.__stderr__.write(f'pydantic at first line: {\"pydantic\" in sys.modules}\\n')\n"
            "        return self.real.write(s)\n"
            "    def flush(self): self.real.flush()\n"
            "    def __getattr__(self, name): return getattr(self.real, name)\n"
            "sys.stdout = Out(sys.stdout)\n"
            "sys.argv = ['referee', *sys.argv[1:]]\n"
            "from referee.__main__ import main\n"
            "main()\n"
        ),
        "cli": "import sys\nsys.argv = ['referee', *sys.argv[1:]]\nfrom referee.cli import main\nmain()\n",
    }[entry]
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, "COLUMNS": "100"},
        timeout=300,
    )


def _comparable(stdout: str) -> list[dict]:
    out = []
    for line in stdout.splitlines():
        v = json.loads(line)
        v.pop("timings")  # measured times and the sandbox's costs differ from run to run
        v["sandbox"] = sorted(v["sandbox"]) if v["sandbox"] else None
        out.append(v)
    return out


def test_the_first_verdict_comes_before_pydantic_and_the_output_is_the_commands(tmp_path) -> None:
    tasks, samples = _files(tmp_path)
    args = ["verify", "--workers", "1", "--json", "--tasks", str(tasks), "--samples", str(samples)]
    early, alone = _run(args, entry="early"), _run(args, entry="cli")
    assert early.returncode == alone.returncode == 0, early.stderr + alone.stderr
    assert early.stderr.splitlines()[0] == "pydantic at first line: False", early.stderr
    assert _comparable(early.stdout) == _comparable(alone.stdout)
    assert [v["passed"] for v in _comparable(early.stdout)] == [True, False, True, True]
    assert early.stderr.splitlines()[-1] == alone.stderr.splitlines()[-1]  # the summary


def test_a_bad_later_line_is_still_refused_after_the_first_verdict(tmp_path) -> None:
    tasks, samples = _files(tmp_path)
    with samples.open("a") as f:
        f.write("{not json\n")
    args = ["verify", "--workers", "1", "--json", "--tasks", str(tasks), "--samples", str(samples)]
    early, alone = _run(args, entry="early"), _run(args, entry="cli")
    assert early.returncode == alone.returncode == 2
    assert alone.stdout == ""
    assert len(early.stdout.splitlines()) == 1  # the first verdict, printed before the check
    assert "samples.jsonl:5: not valid JSON" in early.stderr
    assert early.stderr.splitlines()[-1] == alone.stderr.splitlines()[-1]
