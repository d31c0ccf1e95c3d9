"""Processes that try to outlive a run, leak state, reach the network or the host."""

import os
import socket
import threading

import pytest

from referee.sandbox import Limits

pytestmark = pytest.mark.hostile


def test_double_fork_setsid_and_sigterm_ignorers_do_not_outlive_the_run(run_py):
    src = """
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(1.5)
        open('/workspace/late.txt', 'w').write('I survived')
        open('/tmp/late.txt', 'w').write('I survived')
        os._exit(0)
    os._exit(0)
print('main exits')
"""
    r = run_py(src, limits=Limits(timeout_s=5))
    assert r.exit_code == 0 and r.stdout == "main exits\n"
    if run_py.path == "fork":
        assert "stray-processes-killed" in r.violations
    import time

    time.sleep(2.0)
    probe = run_py(
        "import os\nprint(sorted(os.listdir('/workspace')), sorted(os.listdir('/tmp')),"
        " len([p for p in os.listdir('/proc') if p.isdigit()]))"
    )
    assert probe.stdout.startswith("['main.py'] [] ") or probe.stdout.startswith("[] [] ")
    # Only the probe itself (fresh: init + probe; fork: init + server + probe) is alive.
    assert int(probe.stdout.split()[-1]) <= 3


def test_files_in_tmp_shm_and_workspace_do_not_reach_the_next_run(run_py):
    run_py("for d in ('/tmp', '/dev/shm', '/workspace'):\n    open(d + '/marker', 'w').write('x')")
    r = run_py(
        "import os\nprint([os.path.exists(d + '/marker') for d in ('/tmp', '/dev/shm', '/workspace')])"
    )
    assert r.stdout == "[False, False, False]\n"


def test_module_state_does_not_leak_between_fork_server_runs(sandbox):
    sandbox.run_python("import math, builtins\nmath.pi = 3\nbuiltins.leak = 1\nimport json")
    r = sandbox.run_python(
        "import math, builtins, sys\nprint(math.pi, hasattr(builtins, 'leak'),"
        " 'json' in sys.modules)"
    )
    assert r.stdout.split()[:2] == ["3.141592653589793", "False"]


def test_environment_of_the_host_does_not_leak(run_py, monkeypatch):
    monkeypatch.setenv("REFEREE_TEST_SECRET", "hunter2")
    r = run_py("import os; print(sorted(os.environ))")
    assert "REFEREE_TEST_SECRET" not in r.stdout
    assert "hunter2" not in run_py("import os; print(os.environ)").stdout
    r = run_py("print(open('/proc/1/environ','rb').read())")
    assert "hunter2" not in r.stdout


@pytest.mark.parametrize(
    "path",
    [
        "/etc/shadow",
        "/root",
        "/home",
        "/work",
        os.path.abspath(__file__),
        "/usr/local/bin",
        "/proc/1/root/etc/shadow",
        "/sys/fs/cgroup",
    ],
)
def test_host_files_outside_the_view_are_invisible(run_py, path):
    r = run_py(f"import os\nprint(os.path.exists({path!r}))")
    assert r.stdout == "False\n", (path, r)


def test_project_checkout_and_home_cannot_be_found(run_py):
    src = (
        "import os\nfound = []\n"
        "for top in ('/', '/opt', '/tmp', '/etc', '/workspace'):\n"
        "    for root, dirs, files in os.walk(top):\n"
        "        if root.startswith(('/proc', '/usr', '/opt/python/lib')): dirs[:] = []; continue\n"
        "        if 'pyproject.toml' in files or 'DESIGN.md' in files or '.bashrc' in files:\n"
        "            found.append(root)\n"
        "print(found)"
    )
    assert run_py(src).stdout == "[]\n"


def test_another_runs_workspace_is_invisible(sandbox):
    ws = sandbox.workspace()
    ws.write({"secret.txt": "the-other-run"})
    try:
        # The other workspace's host path does not exist in here, and nothing holds its content.
        src = (
            f"import os\nprint(os.path.exists({str(ws.root)!r}))\n"
            "hits=[]\n"
            "for top in ('/tmp', '/workspace', '/dev/shm'):\n"
            "    for r, d, f in os.walk(top):\n"
            "        hits += [n for n in f if 'secret' in n]\n"
            "print(hits)"
        )
        assert sandbox.run_python(src).stdout == "False\n[]\n"
        assert sandbox.run(["python3", "-c", src]).stdout == "False\n[]\n"
    finally:
        ws.close()


@pytest.mark.parametrize(
    "target",
    [
        "/usr/bin/evil",
        "/etc/passwd",
        "/evil",
        "/opt/python/lib/evil.py",
        "/proc/sys/kernel/hostname",
    ],
)
def test_writing_outside_the_workspace_fails(run_py, target):
    r = run_py(f"open({target!r}, 'w').write('x')")
    assert r.exit_code == 1
    assert (
        "Read-only file system" in r.stderr
        or "Permission denied" in r.stderr
        or "No such file" in r.stderr
    ), r.stderr
    assert not os.path.exists("/evil") and not os.path.exists("/usr/bin/evil")


def _listener(proto: int):
    s = socket.socket(socket.AF_INET, proto)
    s.bind(("127.0.0.1", 0))
    if proto == socket.SOCK_STREAM:
        s.listen(8)
    s.settimeout(0.5)
    return s


def test_tcp_and_udp_to_host_loopback_are_blocked(run_py):
    tcp = _listener(socket.SOCK_STREAM)
    udp = _listener(socket.SOCK_DGRAM)
    got: list[object] = []

    def accept():
        for s in (tcp, udp):
            try:
                got.append(s.accept() if s is tcp else s.recvfrom(100))
            except OSError:
                pass

    t = threading.Thread(target=accept)
    try:
        src = f"""
import socket
out = []
for kind, addr in ((socket.SOCK_STREAM, {tcp.getsockname()!r}), (socket.SOCK_DGRAM, {udp.getsockname()!r})):
    try:
        s = socket.socket(socket.AF_INET, kind)
        s.settimeout(1)
        s.connect(addr)
        s.send(b'leak')
        out.append('sent')
    except OSError as e:
        out.append(type(e).__name__)
print(out)
"""
        r = run_py(src, limits=Limits(timeout_s=5))
        t.start()
        t.join()
        assert "sent" not in r.stdout, r
        assert got == []
    finally:
        tcp.close()
        udp.close()


@pytest.mark.parametrize(
    "attempt",
    [
        "socket.getaddrinfo('example.com', 80)",
        "socket.create_connection(('1.1.1.1', 53), timeout=1)",
        "socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)",
        "socket.socket(socket.AF_PACKET, socket.SOCK_RAW)",
        "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)",
        "socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b'x', ('::1', 53))",
        "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('8.8.8.8', 53))",
    ],
)
def test_network_egress_fails(run_py, attempt):
    r = run_py(
        f"import socket\ntry:\n    {attempt}\n    print('REACHED')\nexcept OSError as e:\n"
        "    print('blocked', e.errno)"
    )
    assert r.stdout.startswith("blocked"), r


def test_unix_sockets_still_work_inside(run_py):
    r = run_py("import socket\na, b = socket.socketpair()\na.send(b'hi')\nprint(b.recv(2))")
    assert r.stdout == "b'hi'\n"


def test_cannot_signal_or_see_host_processes(run_py):
    host_pid = os.getpid()
    src = f"""
import os, signal
try:
    os.kill({host_pid}, signal.SIGKILL)
    print('killed?')
except ProcessLookupError:
    print('not visible')
print(len([p for p in os.listdir('/proc') if p.isdigit()]) < 10)
"""
    r = run_py(src)
    assert r.stdout == "not visible\nTrue\n"


def test_kill_all_only_reaches_the_sandbox(run_py):
    r = run_py(
        "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError as e:\n"
        "    print('refused', e.errno)\nprint('alive')"
    )
    # Fork path: the child filter refuses kill(-1). Fresh path: it kills only this sandbox.
    if run_py.path == "fork":
        assert r.stdout == "refused 1\nalive\n"
    assert run_py("print('next run ok')").stdout == "next run ok\n"


def test_fork_server_cannot_be_killed_by_its_runs(sandbox):
    for attack in (
        "os.kill(2, 9)",
        "os.kill(1, 9)",
        "os.kill(-2, 9)",
        "os.kill(0xffffffff, 9)",
        "signal.pthread_kill(2, 9)",
        "os.pidfd_open(2)",
        "os.kill(os.getppid(), 9)",
    ):
        r = sandbox.run_python(
            f"import os, signal\ntry:\n    {attack}\n    print('done')\n"
            "except (OSError, OverflowError) as e:\n    print('refused')"
        )
        assert "supervisor-lost" not in r.violations, (attack, r)
    assert sandbox.run_python("print(1)").stdout == "1\n"


def test_ptrace_and_proc_mem_of_the_server_are_refused(sandbox):
    src = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, 2, 0, 0)  # PTRACE_ATTACH to the fork server
print('ptrace', r, ctypes.get_errno())
try:
    open('/proc/2/mem', 'rb')
    print('mem opened')
except OSError as e:
    print('mem refused', e.errno)
"""
    r = sandbox.run_python(src)
    assert "ptrace -1 1" in r.stdout and "mem refused" in r.stdout, r


@pytest.mark.parametrize(
    "call",
    [
        "libc.unshare(0x10000000)",  # CLONE_NEWUSER
        "libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)",
        "libc.syscall(321, 0, 0, 0)",  # bpf
        "libc.syscall(250, 0, 0, 0, 0, 0)",  # keyctl
        "libc.syscall(298, 0, 0, 0, 0, 0)",  # perf_event_open
        "libc.syscall(425, 8, 0)",  # io_uring_setup
        "libc.chroot(b'/tmp')",
    ],
)
def test_dangerous_syscalls_are_refused(run_py, call):
    src = f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint({call}, ctypes.get_errno())"
    r = run_py(src)
    assert r.stdout.strip() == "-1 1", (call, r)


def test_capabilities_are_all_dropped(run_py):
    r = run_py(
        "print([l for l in open('/proc/self/status') if l.startswith(('CapEff', 'CapPrm', 'NoNewPrivs', 'Seccomp:'))])"
    )
    assert "CapEff:\\t0000000000000000" in r.stdout and "NoNewPrivs:\\t1" in r.stdout
    assert "Seccomp:\\t2" in r.stdout


def test_symlink_made_inside_cannot_redirect_host_io(sandbox, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("host data")
    ws = sandbox.workspace()
    try:
        sandbox.run_python(
            f"import os\nos.symlink({str(victim)!r}, 'out.txt')\nos.symlink('/etc', 'cfg')",
            workspace=ws,
        )
        assert ws.read_all() == {}
        from referee.errors import UnsafePathError

        with pytest.raises(UnsafePathError):
            ws.read("out.txt")
        with pytest.raises(UnsafePathError):
            ws.write({"cfg/passwd": "owned"})
        ws.write({"out.txt": "replaced"})
        assert victim.read_text() == "host data"
    finally:
        ws.close()


def test_file_names_with_dotdot_are_refused_before_running(sandbox):
    from referee.errors import UnsafePathError

    with pytest.raises(UnsafePathError):
        sandbox.run(["true"], files={"../escape": "x"})
    with pytest.raises(UnsafePathError):
        sandbox.run_python("pass", files={"/abs": "x"})


def test_cannot_ptrace_host_processes(run_py):
    src = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.ptrace(16, {os.getpid()}, 0, 0), ctypes.get_errno())
"""
    r = run_py(src)
    assert r.stdout.split()[0] == "-1" and r.stdout.split()[1] in ("1", "3"), r  # EPERM or ESRCH
