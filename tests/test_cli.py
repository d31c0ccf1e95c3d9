"""The `referee` CLI contract (other tools depend on it)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REFEREE = [sys.executable, "-m", "referee.cli"]
KEYS = {
    "exit_code",
    "signal",
    "timed_out",
    "memory_exceeded",
    "stdout",
    "stderr",
    "stdout_truncated",
    "stderr_truncated",
    "wall_s",
    "cpu_s",
    "peak_memory_mb",
    "violations",
}


def referee(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*REFEREE, *args], capture_output=True, input=stdin, timeout=120)


def test_exec_json_has_the_contract_keys():
    p = referee("exec", "--json", "--", "python3", "-c", "print(6*7)")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) >= KEYS
    assert out["stdout"] == "42\n" and out["exit_code"] == 0 and out["violations"] == []


def test_exec_exits_0_whatever_the_program_did():
    p = referee("exec", "--json", "--timeout", "1", "--", "python3", "-c", "while True: pass")
    assert p.returncode == 0
    out = json.loads(p.stdout)
    assert out["timed_out"] and "timeout" in out["violations"]
    p = referee("exec", "--json", "--", "sh", "-c", "exit 9")
    assert p.returncode == 0 and json.loads(p.stdout)["exit_code"] == 9


def test_exec_memory_option(tmp_path):
    p = referee(
        "exec", "--json", "--memory", "64", "--", "python3", "-c", "b = bytearray(300 << 20)"
    )
    assert json.loads(p.stdout)["memory_exceeded"]


def test_exec_places_files_and_feeds_stdin(tmp_path: Path):
    (tmp_path / "sol.py").write_text("import sys\nprint(open('data/x').read(), sys.stdin.read())")
    (tmp_path / "x").write_text("file")
    (tmp_path / "in").write_text("piped")
    p = referee(
        "exec",
        "--json",
        "--file",
        f"main.py={tmp_path / 'sol.py'}",
        "--file",
        f"data/x={tmp_path / 'x'}",
        "--stdin",
        str(tmp_path / "in"),
        "--",
        "python3",
        "main.py",
    )
    assert json.loads(p.stdout)["stdout"] == "file piped\n"


def test_exec_python_fast_path(tmp_path: Path):
    (tmp_path / "prog.py").write_text("import sys; print(sys.argv[0])")
    p = referee("exec", "--json", "--python", str(tmp_path / "prog.py"))
    out = json.loads(p.stdout)
    assert out["stdout"] == "prog.py\n" and out["backend"] == "bwrap-forkserver"


def test_exec_without_json_relays_output():
    p = referee("exec", "--", "sh", "-c", "echo out; echo err >&2")
    assert p.returncode == 0 and p.stdout == b"out\n" and b"err\n" in p.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["exec", "--file", "../x=/etc/hostname", "--", "true"], b"'..'"),
        (["exec", "--file", "/abs=/etc/hostname", "--", "true"], b"absolute"),
        (["exec", "--file", "nodest", "--", "true"], b"DEST=SRC"),
        (["exec", "--file", "a=/nonexistent/file", "--", "true"], b"cannot read"),
        (["exec", "--timeout", "0", "--", "true"], b"timeout_s"),
        (["exec"], b"either a command"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(args, message):
    p = referee(*args)
    assert p.returncode == 2, p
    assert message in p.stderr


def test_missing_bubblewrap_exits_2_and_names_the_package(tmp_path):
    env = {"PATH": str(tmp_path), "HOME": "/tmp"}
    p = subprocess.run([*REFEREE, "exec", "--", "true"], capture_output=True, env=env, timeout=60)
    assert p.returncode == 2 and b"apt-get install bubblewrap" in p.stderr


def test_doctor_json():
    p = referee("doctor", "--json")
    assert p.returncode == 0
    info = json.loads(p.stdout)
    assert info["fast_path_ok"] and "seccomp" in info["layers"]
