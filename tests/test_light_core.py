"""The light core (issue 28): `pip install referee` without extras runs the core commands, and
a command that needs an extra refuses in one line naming `pip install 'referee[EXTRA]'`.

Every check runs the real CLI (``python -m referee``) in a subprocess whose ``sitecustomize``
makes the extras' packages unimportable on the host (a ``sys.meta_path`` finder that raises
ModuleNotFoundError), as in a venv that has only the core. What runs *inside* the sandbox is not
blocked here (its interpreter does not read our sitecustomize); bench/wheel_check.sh runs the
same commands in a real core-only venv built from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import referee
from referee.optional import EXTRAS

SRC = Path(referee.__file__).resolve().parents[1]

#: The top-level modules of every extra (referee.optional.EXTRAS, kept in step with
#: pyproject.toml by tests/test_packaging.py), and what they bring along.
HEAVY = sorted({m for modules in EXTRAS.values() for m in modules} | {"starlette", "_duckdb"})

_BLOCKER = f"""
import sys

_BLOCKED = frozenset({HEAVY!r})


class _NoExtras:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
        return None


sys.meta_path.insert(0, _NoExtras())
"""


@pytest.fixture(scope="module")
def core_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose Python cannot import any extra's package."""
    site = tmp_path_factory.mktemp("no-extras")
    (site / "sitecustomize.py").write_text(_BLOCKER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(SRC)]), COLUMNS="200")
    env.pop("PYTHONSTARTUP", None)
    return env


def _python(env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 300):
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def _referee(env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 300):
    return _python(env, "-m", "referee", *args, cwd=cwd, timeout=timeout)


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result.stdout


@pytest.fixture(scope="module")
def code_tasks(core_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A list-ops task file made without the extras, its gold samples beside it."""
    folder = tmp_path_factory.mktemp("core-tasks")
    tasks = folder / "list-ops.jsonl"
    _ok(_referee(core_env, "tasks", "generate", "list-ops", "--count", "2", "--out", str(tasks)))
    (folder / "list-ops.gold.jsonl").write_text(
        _ok(_referee(core_env, "tasks", "gold", str(tasks)))
    )
    return tasks


def test_the_blocker_really_hides_the_extras(core_env):
    probe = _python(core_env, "-c", "import numpy")
    assert probe.returncode != 0 and "blocked" in probe.stderr
    probe = _python(core_env, "-c", "import scipy.linalg")
    assert probe.returncode != 0 and "blocked" in probe.stderr


def test_importing_the_core_loads_no_extra():
    """With every extra installed (this venv), importing the core loads none of them."""
    code = textwrap.dedent(
        f"""
        import sys
        import referee, referee.cli, referee.service.client, referee.verify.dispatch
        import referee.sandbox, referee.envs.code, referee.tasks, referee.rollout.evaluate
        import referee.policy.spec, referee.track.store, referee.optional
        from referee.discovery import discover_domains
        discover_domains()
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(SRC)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


def test_doctor_runs_without_the_extras(core_env):
    out = _ok(_referee(core_env, "doctor"))
    assert "seccomp" in out
    assert "extras: none installed; not installed: serve ui ray train" in out


def test_exec_runs_a_program_without_the_extras(core_env, tmp_path):
    program = tmp_path / "p.py"
    program.write_text("print(6 * 7)\n")
    assert _ok(_referee(core_env, "exec", "--python", str(program))).strip() == "42"
    assert _ok(_referee(core_env, "exec", "--", "sh", "-c", "echo hi")).strip() == "hi"


def test_code_tasks_generate_and_verify_without_the_extras(core_env, code_tasks):
    gold = code_tasks.with_name("list-ops.gold.jsonl")
    out = _ok(_referee(core_env, "verify", "--tasks", str(code_tasks), "--samples", str(gold)))
    assert "2 samples: 2 passed" in out
    # A wrong answer still fails: the verifier runs, it does not wave everything through.
    wrong = code_tasks.with_name("wrong.jsonl")
    rows = [json.loads(line) for line in gold.read_text().splitlines()]
    wrong.write_text(
        "".join(json.dumps({**r, "completion": "    return None\n"}) + "\n" for r in rows)
    )
    out = _ok(_referee(core_env, "verify", "--tasks", str(code_tasks), "--samples", str(wrong)))
    assert "0 passed, 2 failed" in out


def test_humaneval_imports_and_verifies_without_the_extras(core_env, tmp_path):
    tasks = tmp_path / "he.jsonl"
    _ok(_referee(core_env, "tasks", "import", "humaneval", "--out", str(tasks)))
    gold = _ok(_referee(core_env, "tasks", "gold", str(tasks))).splitlines()[:3]
    samples = tmp_path / "he.gold.jsonl"
    samples.write_text("\n".join(gold) + "\n")
    out = _ok(_referee(core_env, "verify", "--tasks", str(tasks), "--samples", str(samples)))
    assert "3 samples: 3 passed" in out


@pytest.mark.parametrize(
    ("family", "tool"),
    [
        ("ops-permissions", None),  # shell
        ("shop-refund", None),  # toolworld
        ("v-comb", "iverilog"),  # verilog
        ("sql-filter", None),  # SQL on SQLite (seed 0): no DuckDB needed
    ],
)
def test_core_domains_generate_and_verify_without_the_extras(core_env, tmp_path, family, tool):
    if tool is not None and shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    tasks = tmp_path / f"{family}.jsonl"
    _ok(_referee(core_env, "tasks", "generate", family, "--count", "1", "--seed", "0",
                 "--out", str(tasks)))  # fmt: skip
    samples = tmp_path / "gold.jsonl"
    samples.write_text(_ok(_referee(core_env, "tasks", "gold", str(tasks))))
    out = _ok(_referee(core_env, "verify", "--tasks", str(tasks), "--samples", str(samples)))
    assert "1 samples: 1 passed" in out


@pytest.mark.parametrize("verifier", ["pytest", "toolworld"])
def test_redteam_of_a_core_verifier_runs_without_the_extras(core_env, verifier):
    out = _ok(_referee(core_env, "redteam", "--verifier", verifier))  # exit 1: one got through
    assert len(out.splitlines()) >= 10  # one line per exploit


def test_the_service_client_imports_without_the_extras(core_env):
    _ok(_python(core_env, "-c", "from referee.service.client import AsyncClient, Client"))


@pytest.mark.parametrize(
    ("extra", "args"),
    [
        ("serve", ["serve", "--tasks", "{tasks}", "--port", "0", "--no-auth"]),
        ("ui", ["ui", "--run", "{folder}"]),
        ("train", ["train", "--steps", "1"]),
        ("train", ["eval", "--tasks", "{tasks}", "--policy", "local:{folder}"]),
        (
            "train",
            ["tasks", "calibrate", "{tasks}", "--policy", "local:x", "--out", "{folder}/c.jsonl"],
        ),
        ("ray", ["verify", "--tasks", "{tasks}", "--samples", "{gold}", "--ray", "local"]),
        (
            "numeric",
            ["tasks", "generate", "num-linear", "--count", "1", "--out", "{folder}/n.jsonl"],
        ),
        (
            "dataframe",
            ["tasks", "generate", "df-clean", "--count", "1", "--out", "{folder}/d.jsonl"],
        ),
        # seed 1: a DuckDB task (the engine alternates with the seed)
        (
            "sql",
            [
                "tasks",
                "generate",
                "sql-join",
                "--count",
                "1",
                "--seed",
                "1",
                "--out",
                "{folder}/s.jsonl",
            ],
        ),
        ("numeric", ["redteam", "--verifier", "numeric"]),
        ("synth", ["synth", "{folder}", "--out", "{folder}/syn.jsonl"]),
        (
            "parquet",
            ["tasks", "export", "{tasks}", "--format", "verl", "--out", "{folder}/x.parquet"],
        ),
    ],
)
def test_a_command_that_needs_an_extra_names_it_in_one_line(core_env, code_tasks, extra, args):
    fill = {"tasks": str(code_tasks), "gold": str(code_tasks.with_name("list-ops.gold.jsonl")),
            "folder": str(code_tasks.parent)}  # fmt: skip
    result = _referee(core_env, *(a.format(**fill) for a in args), timeout=120)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert f"pip install 'referee[{extra}]'" in lines[0], lines[0]
    assert "Traceback" not in result.stderr


def test_the_python_api_refuses_a_domain_without_its_extra_in_one_line(core_env):
    code = textwrap.dedent(
        """
        from referee.domains import generate_family
        from referee.errors import ConfigError
        for family in ("num-linear", "df-pivot"):
            try:
                generate_family(family, count=1)
            except ConfigError as e:
                print(e)
        """
    )
    out = _ok(_python(core_env, "-c", code)).splitlines()
    assert len(out) == 2
    assert "pip install 'referee[numeric]'" in out[0]
    assert "pip install 'referee[dataframe]'" in out[1]
