"""Fork bombs, memory bombs, infinite loops, sleepers, disk fill, output floods."""

import shutil
import time

import pytest

from referee.sandbox import Limits
from tests.redteam.strays import stray_sandbox_processes

pytestmark = pytest.mark.hostile

FORK_BOMB = """
import os
n = 0
while True:
    try:
        os.fork()
        n += 1
    except OSError:
        pass
"""


def _healthy(run_py):
    r = run_py("print('still fine')", limits=Limits(timeout_s=5))
    assert r.exit_code == 0 and r.stdout == "still fine\n", r


def test_fork_bomb_is_contained(run_py):
    r = run_py(FORK_BOMB, limits=Limits(timeout_s=2, max_processes=32))
    assert r.timed_out
    assert "timeout" in r.violations
    assert "process-limit" in r.violations
    _healthy(run_py)


def test_shell_fork_bomb_is_contained(sandbox):
    r = sandbox.run(
        # Seconds, not one: on a busy machine the bomb takes a while to reach its 32 processes.
        ["sh", "-c", "f(){ f|f & }; f; sleep 30"],
        limits=Limits(timeout_s=6, max_processes=32),
    )
    assert "process-limit" in r.violations and r.timed_out, r
    assert sandbox.run(["true"]).exit_code == 0


def test_memory_bomb_is_stopped_and_reported(run_py):
    r = run_py(
        "x = []\nwhile True: x.append(bytearray(10 << 20))",
        limits=Limits(timeout_s=10, memory_mb=128),
    )
    assert r.memory_exceeded
    assert "memory-limit" in r.violations
    assert r.exit_code != 0
    assert r.peak_memory_mb <= 128 + 16
    _healthy(run_py)


def test_memory_bomb_in_a_forked_child_is_stopped(run_py):
    src = "import os\nif os.fork() == 0:\n    b = bytearray(1 << 30)\n    os._exit(0)\nos.wait()"
    r = run_py(src, limits=Limits(timeout_s=10, memory_mb=128))
    assert r.memory_exceeded


def test_infinite_loop_hits_the_wall_clock(run_py):
    r = run_py("while True: pass", limits=Limits(timeout_s=1))
    assert r.timed_out and r.exit_code is None and "timeout" in r.violations
    assert 0.9 <= r.wall_s < 3.0
    _healthy(run_py)


def test_cpu_limit_fires_before_a_generous_timeout(run_py):
    # Generous enough for a busy machine, where one CPU second can take many wall seconds.
    r = run_py("while True: pass", limits=Limits(timeout_s=60, cpu_s=1))
    assert not r.timed_out
    assert "cpu-limit" in r.violations
    assert r.cpu_s < 3, r


def test_sleep_past_the_timeout(run_py):
    r = run_py("import time; time.sleep(60)", limits=Limits(timeout_s=1))
    assert r.timed_out and r.wall_s < 3


def test_filling_the_disk_is_contained(run_py):
    before = shutil.disk_usage("/").free
    src = (
        "import os\n"
        "chunk = b'x' * (1 << 20)\n"
        "for d in ('/workspace', '/tmp'):\n"
        "    try:\n"
        "        for i in range(10_000):\n"
        "            with open(f'{d}/fill{i}', 'wb') as f: f.write(chunk * 8)\n"
        "    except OSError as e:\n"
        "        print(d, 'stopped', e.errno)\n"
    )
    r = run_py(src, limits=Limits(timeout_s=20, memory_mb=128, max_file_mb=16))
    # Files live in memory charged to the run: the memory limit or the tmpfs size ends it.
    assert r.exit_code != 0 or "stopped" in r.stdout
    after = shutil.disk_usage("/").free
    assert before - after < 64 << 20, "the run's writes reached the host disk"
    _healthy(run_py)


def test_one_huge_file_hits_the_file_size_limit(run_py):
    src = "f = open('big', 'wb')\nwhile True: f.write(b'x' * (1 << 20))"
    r = run_py(src, limits=Limits(timeout_s=10, max_file_mb=4, memory_mb=256))
    assert "file-size-limit" in r.violations or r.exit_code != 0
    assert r.signal == 25 or "File too large" in r.stderr


def test_stdout_flood_is_truncated_and_flagged(run_py):
    r = run_py(
        "import sys\nwhile True: sys.stdout.write('A' * 65536)",
        limits=Limits(timeout_s=5, stdout_bytes=100_000),
    )
    assert r.stdout_truncated and "output-limit" in r.violations
    assert len(r.stdout) == 100_000 and set(r.stdout) == {"A"}
    assert not r.timed_out  # the closed pipe ends the writer; nothing hangs
    _healthy(run_py)


def test_binary_and_invalid_utf8_output(run_py):
    src = "import os\nos.write(1, bytes(range(256)) * 4)\nos.write(2, b'\\xff\\xfe bad \\x00')"
    r = run_py(src)
    assert r.exit_code == 0
    assert "\ufffd" in r.stdout and "\x00" in r.stdout
    assert r.stderr.startswith("\ufffd\ufffd bad")


def test_stdin_flood_and_closed_stdin(run_py):
    r = run_py("import sys; print(len(sys.stdin.buffer.read()))", stdin=b"z" * (8 << 20))
    assert r.stdout == f"{8 << 20}\n"
    r = run_py("import sys; print(repr(sys.stdin.read()))")
    assert r.stdout == "''\n"


def test_host_has_no_leftover_sandbox_processes(run_py):
    run_py(
        "import os\nfor _ in range(5):\n    if os.fork() == 0:\n        os.setsid()\n        import time; time.sleep(30)"
    )
    # A killed process can still be tearing down its memory when the run returns (state R, an
    # empty cmdline): it must be gone within moments, as the red team's after-check allows.
    deadline = time.monotonic() + 3
    while (leftovers := stray_sandbox_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers == []
