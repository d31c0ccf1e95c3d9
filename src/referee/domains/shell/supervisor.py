"""The in-sandbox half of a shell session: a tiny supervisor that runs one command per request.

It runs as ``python -I -c SUPERVISOR_SOURCE`` inside a long-lived bubblewrap sandbox, so that
processes a command leaves in the background (services, a runaway writer) live on between the
commands of an episode, as on a real machine. Requests arrive as JSON lines on stdin and answers
go out as JSON lines on stdout; before it runs anything it moves both pipes to private
descriptors and points 0, 1 and 2 at /dev/null, so no command inherits the protocol.

A command can still reach the supervisor (it runs as the same uid): it could kill it or write to
its pipe through ``/proc``. That only ends or garbles the agent's *own* observations; the grader
never reads anything through this channel (the final state is read on the host, after every
process of the session is dead), see :mod:`referee.domains.shell.session`.
"""

from __future__ import annotations

__all__ = ["SUPERVISOR_SOURCE"]

SUPERVISOR_SOURCE = r"""
import json, os, select, signal, subprocess, sys, time
rfd, wfd = os.dup(0), os.dup(1)   # private (close-on-exec) copies of the protocol pipes
null = os.open("/dev/null", os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
reader, writer = os.fdopen(rfd, "rb"), os.fdopen(wfd, "wb")

def send(obj):
    writer.write(json.dumps(obj).encode() + b"\n")
    writer.flush()

def capture(n):
    path = "/tmp/.session-%d-%d" % (os.getpid(), n)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.unlink(path)
    return fd

def read_back(fd, cap):
    data = os.pread(fd, cap + 1, 0)
    os.close(fd)
    return data[:cap].decode("utf-8", "replace"), len(data) > cap

def wait(p, timeout):
    # Popen.wait(timeout) sleeps in a loop of growing naps (0.5 ms, 1, 2, ... 50 ms) between
    # non-blocking waitpid calls, so a command that takes 2 ms is seen to end 1-4 ms late (and
    # a 60 ms one up to 50 ms late). A pidfd becomes readable the moment the child exits;
    # Popen.wait's own loop stays as the fallback where the kernel has no pidfd_open.
    try:
        fd = os.pidfd_open(p.pid)
    except (AttributeError, OSError):
        return p.wait(timeout)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(max(0.0, timeout) * 1000):
            raise subprocess.TimeoutExpired(p.args, timeout)
    finally:
        os.close(fd)
    return p.wait()

send({"hello": True, "pid": os.getpid()})
n = 0
for line in reader:
    req = json.loads(line)
    n += 1
    out, err = capture(2 * n), capture(2 * n + 1)
    t0 = time.monotonic()
    timed_out = False
    try:
        p = subprocess.Popen(["/bin/sh", "-c", req["cmd"]], stdin=null, stdout=out, stderr=err,
                             cwd="/workspace", start_new_session=True, env=req.get("env"))
    except (OSError, ValueError) as e:  # E2BIG, a NUL byte in the command
        os.close(out); os.close(err)
        send({"exit": 127, "signal": None, "timed_out": False, "stdout": "",
              "stderr": "cannot start: %s" % e, "truncated": False, "wall_s": 0.0})
        continue
    try:
        status = wait(p, req["timeout"])
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        status = p.wait()
    cap = int(req.get("max_out", 65536))
    so, t1 = read_back(out, cap)
    se, t2 = read_back(err, cap)
    send({"exit": status if status >= 0 else None, "signal": -status if status < 0 else None,
          "timed_out": timed_out, "stdout": so, "stderr": se, "truncated": t1 or t2,
          "wall_s": time.monotonic() - t0})
"""
