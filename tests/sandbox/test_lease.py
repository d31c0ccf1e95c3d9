"""A lease: one fork-server worker held for several runs that share its workspace."""

import pytest

from referee.errors import SandboxError
from referee.sandbox import Limits, Sandbox
from referee.sandbox.local import UnsafeBackendWarning


def test_runs_of_a_lease_share_its_workspace_and_the_host_reads_it(sandbox):
    with sandbox.lease() as lease:
        lease.workspace.write({"a.txt": "one\n"})
        r = lease.run_python("open('b.txt', 'w').write(open('a.txt').read().upper())")
        assert r.ok, r
        assert lease.workspace.read("b.txt") == b"ONE\n"
        r = lease.exec(["sed", "-i", "s/ONE/TWO/", "b.txt"])
        assert r.ok and r.backend == "bwrap-forkserver", r
        assert lease.run_python("print(open('b.txt').read(), end='')").stdout == "TWO\n"


def test_a_lease_leaves_an_empty_workspace_and_no_state_for_the_next(sandbox):
    with sandbox.lease() as lease:
        lease.workspace.write({"secret.txt": "x"})
        root = lease.workspace.root
    assert list(root.iterdir()) == []
    for _ in range(3):  # whichever worker the next runs get
        assert sandbox.run_python("import os; print(os.listdir('.'))").stdout == "[]\n"


def test_exec_runs_a_command_with_the_run_limits(sandbox):
    with sandbox.lease() as lease:
        r = lease.exec(["sh", "-c", "echo $0; exit 3"])
        assert r.exit_code == 3 and r.stdout == "sh\n", r
        r = lease.exec(["sleep", "5"], limits=Limits(timeout_s=0.5))
        assert r.timed_out, r
        missing = lease.exec(["no-such-command-here"])
        assert missing.exit_code != 0 and "FileNotFoundError" in missing.stderr, missing


def test_a_worker_that_died_is_an_error_not_an_empty_workspace():
    with Sandbox(python_workers=1) as sb, sb.lease() as lease:
        lease.workspace.write({"state.txt": "needed"})
        [worker] = sb.pool.workers
        assert worker.proc is not None
        worker.proc.kill()
        worker.proc.wait()
        with pytest.raises(SandboxError, match="died"):
            lease.run_python("print(open('state.txt').read())")


def test_the_local_backend_has_nothing_to_lease():
    with pytest.warns(UnsafeBackendWarning):
        sb = Sandbox(backend="local")
    with sb, pytest.raises(SandboxError, match="local backend"), sb.lease():
        pass
