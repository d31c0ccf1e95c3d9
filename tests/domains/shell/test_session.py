"""A shell session's commands: exit codes, signals, timeouts and background jobs, as the
supervisor reports them (it waits on each command's pidfd, issue 32)."""

from __future__ import annotations

import pytest

from referee.domains.shell.session import SessionLimits, ShellSession


@pytest.fixture
def session(sandbox):  # type: ignore[no-untyped-def]
    with ShellSession(sandbox, [("etc/motd", "hi\n", 0o644)]) as s:
        yield s


def test_each_command_reports_its_own_exit_code_and_output(session):
    for code in (0, 3, 0, 1, 42):
        r = session.run(f"cat etc/motd; exit {code}")
        assert (r.exit_code, r.signal, r.timed_out, r.lost) == (code, None, False, False)
        assert r.stdout == "hi\n"
    assert session.run("echo err >&2").stderr == "err\n"


def test_a_command_killed_by_a_signal_reports_the_signal(session):
    r = session.run("kill -9 $$")
    assert (r.exit_code, r.signal, r.timed_out) == (None, 9, False)


def test_a_command_past_its_timeout_is_killed_and_said_so(session):
    r = session.run("echo start; sleep 30", timeout_s=0.5)
    assert r.timed_out and r.exit_code is None and r.signal == 9
    assert r.stdout == "start\n"
    assert r.wall_s < 20  # killed at its timeout, not after the command's 30 s
    # The session goes on: the next command runs as usual.
    assert session.run("exit 0").exit_code == 0


def test_a_background_job_outlives_the_command_that_started_it(session):
    r = session.run("setsid sh -c 'sleep 30' >/dev/null 2>&1 & echo started")
    assert r.exit_code == 0 and r.stdout == "started\n"
    assert any("sleep 30" in p.cmdline for p in session.processes())


def test_output_past_the_limit_is_cut_and_flagged(sandbox):
    limits = SessionLimits(max_output=100)
    with ShellSession(sandbox, [], limits=limits) as s:
        r = s.run("head -c 1000 /dev/zero | tr '\\0' x")
        assert r.truncated and r.stdout == "x" * 100
