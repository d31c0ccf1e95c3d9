"""Ordinary behaviour of both execution paths: what a well-behaved program sees and gets back."""

import signal

import pytest

from referee.sandbox import Limits


def test_exit_codes_and_output(run_py):
    r = run_py("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)")
    assert (r.exit_code, r.stdout, r.stderr, r.signal) == (3, "out\n", "err\n", None)
    assert not r.ok and r.wall_s > 0


def test_uncaught_exception_gives_a_traceback_and_exit_1(run_py):
    r = run_py("def f():\n    raise ValueError('boom')\nf()")
    assert r.exit_code == 1
    assert 'File "/workspace/main.py", line 2, in f' in r.stderr
    assert r.stderr.strip().endswith("ValueError: boom")
    assert "_server" not in r.stderr and "<string>" not in r.stderr


def test_syntax_error_is_the_programs_failure(run_py):
    r = run_py("def (:\n")
    assert r.exit_code == 1 and "SyntaxError" in r.stderr


def test_killed_by_a_signal(run_py):
    r = run_py("import os, signal\nos.kill(os.getpid(), signal.SIGABRT)")
    assert r.exit_code is None and r.signal == signal.SIGABRT


def test_stdin_files_and_cwd(run_py):
    r = run_py(
        "import os, sys\nprint(os.getcwd(), open('data/in.txt').read(), sys.stdin.read())",
        files={"data/in.txt": "file"},
        stdin=b"piped",
    )
    assert r.stdout == "/workspace file piped\n"


def test_workspace_modules_are_importable(run_py):
    r = run_py("import helper\nprint(helper.VALUE)", files={"helper.py": "VALUE = 42"})
    assert r.stdout == "42\n"


def test_python3_is_referees_interpreter_with_stdlib_only(run_py):
    import sys

    r = run_py(
        "import sys\nprint(sys.version_info[:2], any('site-packages' in p and __import__('os').listdir(p) for p in sys.path if __import__('os').path.isdir(p)))"
    )
    assert r.stdout == f"{tuple(sys.version_info[:2])} False\n"
    r = run_py("import pydantic")
    assert r.exit_code == 1 and "ModuleNotFoundError" in r.stderr


def test_environment_is_clean_and_extendable(run_py):
    r = run_py(
        "import os\nprint(os.environ['HOME'], os.environ['GREETING'], os.getuid())",
        env={"GREETING": "hi"},
    )
    assert r.stdout == "/tmp hi 1000\n"


def test_atexit_and_threads_finish_like_python(run_py):
    src = (
        "import atexit, threading, time\natexit.register(lambda: print('atexit'))\n"
        "t = threading.Thread(target=lambda: (time.sleep(0.1), print('thread')))\nt.start()"
    )
    assert run_py(src).stdout == "thread\natexit\n"


def test_sys_exit_with_message(run_py):
    r = run_py("raise SystemExit('bad input')")
    assert r.exit_code == 1 and r.stderr == "bad input\n"


def test_timeout_is_accurate(run_py):
    r = run_py("import time; time.sleep(0.3); print('done')", limits=Limits(timeout_s=2))
    assert r.exit_code == 0 and 0.3 <= r.wall_s < 1.5


def test_cpu_time_and_memory_are_measured(run_py):
    r = run_py("x = bytearray(64 << 20)\nfor i in range(2_000_000): pass")
    assert r.cpu_s > 0.02
    assert 60 <= r.peak_memory_mb <= 200


def test_isolation_layers_are_reported(run_py):
    r = run_py("pass")
    for layer in ("bwrap", "seccomp", "rlimits", "netns", "pidns", "userns"):
        assert layer in r.isolation
    assert r.backend in ("bwrap", "bwrap-forkserver")


def test_shell_commands_on_the_fresh_path(sandbox):
    r = sandbox.run(["sh", "-c", "echo $HOME; cat in.txt | tr a-z A-Z"], files={"in.txt": "abc"})
    assert r.stdout == "/tmp\nABC"
    r = sandbox.run(["definitely-not-a-command"])
    assert r.exit_code == 127


def test_a_program_that_starts_nothing_has_no_stray_processes_even_under_load(sandbox):
    # issue 20 (12): bubblewrap returns as soon as its init reports the exit status, with that
    # init (pid 1 of the run's namespace) still on its way out of the cgroup; it was counted as
    # a stray in most runs on a busy machine. Keep a CPU burner running to make that likely.
    import subprocess
    import sys

    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        results = [sandbox.run(["python3", "-c", "print(6*7)"]) for _ in range(20)]
    finally:
        burner.kill()
        burner.wait()
    assert [r.stdout for r in results] == ["42\n"] * 20
    assert [r.violations for r in results] == [[]] * 20


def test_session_workspace_persists_across_runs_and_paths(sandbox):
    ws = sandbox.workspace()
    try:
        sandbox.run_python("open('state.txt', 'w').write('1')", workspace=ws)
        sandbox.run(["sh", "-c", "echo 2 >> state.txt"], workspace=ws)
        snap = ws.snapshot()
        sandbox.run_python("open('state.txt', 'a').write('3')", workspace=ws)
        assert ws.read("state.txt") == b"12\n3"
        ws.restore(snap)
        r = sandbox.run_python("print(open('state.txt').read().strip())", workspace=ws)
        assert r.stdout == "12\n"
    finally:
        ws.close()


def test_concurrent_fast_path_runs_do_not_mix(sandbox):
    from concurrent.futures import ThreadPoolExecutor

    def one(i):
        return sandbox.run_python(
            f"import os\nopen('me', 'w').write('{i}')\nprint(open('me').read())",
            files={"seed": str(i)},
        )

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(one, range(40)))
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(40)]


@pytest.mark.hostile
def test_worker_lost_mid_run_is_reported_and_replaced(sandbox):
    import threading
    import time

    pool = sandbox.pool
    worker = pool.workers[0]
    # Take this worker out of rotation so the run below lands on it.
    taken = [pool._idle.get() for _ in pool.workers]
    try:

        def kill_soon():
            time.sleep(0.3)
            worker.proc.kill()  # an infrastructure fault injected from the host

        threading.Thread(target=kill_soon).start()
        r = worker.run("import time; time.sleep(5)", limits=Limits(timeout_s=3))
        assert "supervisor-lost" in r.violations and r.exit_code is None
        assert worker.run("print('replaced')").stdout == "replaced\n"
    finally:
        for w in taken:
            pool._idle.put(w)


def test_large_programs_travel_out_of_band(run_py):
    source = "# padding\n" * 20_000 + "print('big ok')"
    assert len(source) > 100_000
    assert run_py(source).stdout == "big ok\n"


def test_workers_outlive_the_thread_that_started_them():
    # PR_SET_PDEATHSIG (bwrap --die-with-parent) follows the forking *thread*: a pool started
    # from a short-lived thread must not die with it.
    import threading
    import time

    from referee.sandbox import Sandbox

    with Sandbox(python_workers=1) as sb:
        t = threading.Thread(target=lambda: sb.run_python("pass"))
        t.start()
        t.join()
        proc = sb.pool.workers[0].proc
        time.sleep(0.3)
        assert proc.poll() is None
        assert sb.run_python("print(1)").stdout == "1\n"
        assert sb.pool.workers[0].proc is proc


def test_python_paths_are_importable_read_only(tmp_path):
    from referee.sandbox import Sandbox

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "extra_mod.py").write_text("VALUE = 'from the repo venv'\n")
    with Sandbox(python_workers=1, python_paths=(tmp_path / "site",)) as sb:
        assert sb.python_paths == ["/opt/paths/0"]
        src = (
            "import sys\nsys.path.insert(0, '/opt/paths/0')\nimport extra_mod\n"
            "print(extra_mod.VALUE)\ntry:\n    open('/opt/paths/0/x', 'w')\n"
            "except OSError as e:\n    print('read-only', e.errno)"
        )
        r = sb.run(["python3", "-c", src])
        assert r.stdout == "from the repo venv\nread-only 30\n", r
        assert sb.run_python(src).stdout == r.stdout


def test_a_run_that_waits_for_its_children_leaves_no_stray(sandbox):
    # The fork server proves "nothing left" with waitpid(-1, WNOHANG) failing: children the run
    # reaped itself are no strays.
    r = sandbox.run_python(
        "import os\nfor _ in range(3):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
        "    os.waitpid(pid, 0)\nprint('ok')"
    )
    assert r.stdout == "ok\n" and r.violations == []


def test_an_orphan_that_already_exited_is_still_a_stray(sandbox):
    # The grandchild exits at once and is handed to the fork server (the subreaper) as a
    # zombie: the run still left a process behind, and it is counted and reaped.
    src = (
        "import os, time\npid = os.fork()\nif pid == 0:\n    if os.fork() == 0:\n"
        "        os._exit(0)\n    os._exit(0)\nos.waitpid(pid, 0)\ntime.sleep(0.2)\nprint('ok')"
    )
    r = sandbox.run_python(src)
    assert r.stdout == "ok\n" and "stray-processes-killed" in r.violations
    probe = sandbox.run_python(
        "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))"
    )
    assert probe.stdout == "3\n"  # init, the server, the probe: nothing of the run before
