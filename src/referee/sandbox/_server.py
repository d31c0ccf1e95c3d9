"""The fork server: runs *inside* a bubblewrap sandbox, forks one child per Python run.

This file is executed by the sandbox's interpreter with ``python -I -c <source>``; it uses only the
standard library and must not import referee (which is not in the sandbox). Protocol, over a
SOCK_SEQPACKET socket inherited as fd ``argv[1]``:

* server -> host, once: ``{"pid": ...}``; host -> server: the child seccomp filter (raw BPF),
  then a JSON object of modules to preload (name -> source), then one of installed modules to
  import at start (``{"paths": [...], "imports": [...]}``).
* host -> server, per run: a JSON request (with the source inline when small), with fds
  [stdin, stdout, stderr] and, for a large program, a fourth holding the source;
  server -> host: a JSON response once the child *and every process it started* are dead.

Per run the child gets: a new session, the host's pipes as stdio, ``/workspace`` as cwd, rlimits,
a clean environment, the child filter, and a fresh ``__main__``. The server then kills everything
left in the pid namespace (it is the namespace's subreaper), and empties /tmp and /dev/shm, so no
file, process or module state of one run reaches the next.
"""

import atexit
import ctypes
import gc
import json
import json.encoder
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time
import types

PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
SECCOMP_MODE_FILTER = 2

# Warm the modules most programs import, so that each child does not pay for them. Children get
# copy-on-write pages: whatever a child does to a module stays in that child.
# The list is short on purpose: every preloaded page makes each fork slower (0.7 ms bare here,
# 1.5 ms with 26 modules), so only modules most programs import anyway are worth it.
PRELOAD = ("typing", "collections", "math", "re", "functools", "itertools")

_libc = ctypes.CDLL(None, use_errno=True)


def _json_dumps():
    """``json.dumps`` with its defaults, its C encoder made once.

    ``json.dumps`` makes a new encoder through three Python frames on every call; every page
    those touch in the server after a fork is a page fault. Same text; no circular-reference
    check (the replies are flat dicts made here).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.dumps
    encode = make(
        None, None, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )

    def dumps(obj, _join="".join):
        return _join(encode(obj, 0))

    return dumps


_dumps = _json_dumps()
_scan = json.JSONDecoder().scan_once


def _loads(data):
    """``json.loads`` of the host's request (compact JSON from ``json.dumps``) in one C call;
    anything else (leading or trailing text) takes ``json.loads`` itself."""
    text = data.decode("utf-8", "surrogatepass")
    try:
        obj, end = _scan(text, 0)
    except StopIteration:
        end = -1
    return obj if end == len(text) else json.loads(data)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _prctl(option, arg2=0):
    if _libc.prctl(option, ctypes.c_ulong(arg2), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl failed")


class Server:
    def __init__(self, sock):
        self.sock = sock
        self.sock_fd = sock.fileno()
        self.pid = os.getpid()
        self.fprog = self.fprog_ref = None
        self._bpf = None
        self.main = self.compiled = self.compile_error = None
        self.rlimits = []
        self.env = self.rlimits_req = None
        self.runs = 0
        self.devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(self.devnull, fd)
        # Fresh stdio objects over fds 0-2, shared by every run (each child writes to its copy).
        sys.stdin = sys.__stdin__ = open(0, closefd=False)
        sys.stdout = sys.__stdout__ = open(1, "w", closefd=False)
        sys.stderr = sys.__stderr__ = open(2, "w", closefd=False, errors="backslashreplace")

    def handshake(self):
        self.sock.send(json.dumps({"pid": self.pid, "python": sys.version}).encode())
        bpf = self.sock.recv(1 << 20)
        if bpf:
            self._bpf = ctypes.create_string_buffer(bpf, len(bpf))
            self.fprog = _SockFprog(len(bpf) // 8, ctypes.addressof(self._bpf))
            self.fprog_ref = ctypes.byref(self.fprog)  # made once: the child only passes it
        # Modules every run may import at no cost (a verifier's harness, say): compiled once here.
        for name, source in json.loads(self.sock.recv(1 << 20) or b"{}").items():
            module = types.ModuleType(name)
            module.__file__ = f"<preloaded {name}>"
            exec(compile(source, module.__file__, "exec"), module.__dict__)
            sys.modules[name] = module
        # Installed modules (pytest, say) imported once here, from extra paths that are on
        # sys.path only while they import: runs find them in sys.modules, and sys.path is left
        # as it was. Nothing of a run's code is imported here.
        warm = json.loads(self.sock.recv(1 << 20) or b"{}")
        saved = list(sys.path)
        sys.path[:0] = warm.get("paths", [])
        try:
            for name in warm.get("imports", []):
                try:
                    __import__(name)
                except ImportError:
                    pass
        finally:
            sys.path[:] = saved

    def serve(self):
        while True:
            try:
                msg, fds = self.receive()
            except OSError:
                return
            if not msg:
                return
            try:
                response = self.run(_loads(msg), fds)
            except Exception as e:  # an infrastructure failure, reported as such
                response = {"error": f"{type(e).__name__}: {e}"}
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self.sock.send(_dumps(response).encode())
            # Files left in /tmp and /dev/shm go now, after the reply (the caller need not wait)
            # and before the next request is read (no run can see them).
            self.clean_tmp()
            self.runs += 1
            if self.runs % 256 == 0:  # the server's own cyclic garbage, now and then
                gc.collect()
                gc.freeze()
                _trim_heap()

    def receive(self, _space=socket.CMSG_LEN(8 * 4)):
        """One request and its fds (at most 8): ``socket.recv_fds`` without its per-call import
        and array, which every run would execute (and fault on) in the server."""
        msg, ancdata, _flags, _addr = self.sock.recvmsg(1 << 16, _space)
        fds = []
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += memoryview(data)[: len(data) - len(data) % 4].cast("i").tolist()
        return msg, fds

    def prepare(self, req, fds):
        """Everything a run needs that can be done before the fork, in the server.

        Work done here is not repeated as copy-on-write page faults in the child, which on this
        kind of machine cost more than the work itself. The server's own stdio is never used, so
        the run's pipes go straight onto fds 0-2 and the child inherits them; the stdio objects
        made at start-up keep pointing at those fds.
        """
        if "source" in req:
            source = req["source"].encode("utf-8", "surrogateescape")
            stdin, stdout, stderr = fds
        else:
            stdin, stdout, stderr, source_fd = fds
            with os.fdopen(source_fd, "rb", closefd=True) as f:
                source = f.read()
            fds.remove(source_fd)
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        for fd in fds:
            os.close(fd)
        fds.clear()
        # The environment and the limits rarely change between requests: rebuilding them costs
        # more (os.environ's clear() is a Python loop) than comparing them.
        if req["env"] != self.env:
            os.environ.clear()
            os.environ.update(req["env"])
            self.env = req["env"]
        sys.argv = req["argv"]
        self.main = types.ModuleType("__main__")
        self.main.__file__ = "/workspace/" + req["name"]
        self.main.__builtins__ = __builtins__
        try:
            self.compiled = compile(source, self.main.__file__, "exec")
            self.compile_error = None
        except BaseException as e:  # a SyntaxError is the program's failure, shown as python would
            self.compiled = None
            self.compile_error = e
        if req["rlimits"] != self.rlimits_req:
            self.rlimits = [(getattr(resource, n), tuple(v)) for n, v in req["rlimits"]]
            self.rlimits_req = req["rlimits"]

    def run(self, req, fds):
        self.prepare(req, fds)
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            self.child()  # never returns
        # Until the child is reaped, every page the server writes is copied (the child still
        # shares it): touch as little as possible here. The run's pipes (fds 0-2), module and
        # code object are let go of only after the reap, before the reply (so the caller sees
        # the end of the output no later than the reply).
        timed_out = False
        pidfd = os.pidfd_open(pid)
        try:
            ready, _, _ = select.select([pidfd], [], [], req["timeout"])
        finally:
            os.close(pidfd)
        wait = None
        if not ready:
            timed_out = True
            wait = self.runqueue_wait()
            os.kill(pid, signal.SIGKILL)
        _, status, ru = os.wait4(pid, 0)
        wall = time.monotonic() - t0
        for fd in (0, 1, 2):
            os.dup2(self.devnull, fd)
        self.main = self.compiled = self.compile_error = None
        strays = self.kill_everything_else()
        resp = {
            "wall": wall,
            "utime": ru.ru_utime,
            "stime": ru.ru_stime,
            "maxrss_kb": ru.ru_maxrss,
            "timed_out": timed_out,
            "strays": strays,
        }
        if wait is not None:
            resp["wait"] = wait
        if os.WIFSIGNALED(status):
            resp["signal"] = os.WTERMSIG(status)
        else:
            resp["exit_code"] = os.WEXITSTATUS(status)
        return resp

    def runqueue_wait(self):
        """Seconds the run's processes (all but us and init) spent runnable without a CPU
        (schedstat); read when the wall clock ends a run, to tell starved from idle."""
        total, known = 0, False
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) in (1, self.pid):
                continue
            try:
                with open("/proc/" + p + "/schedstat", "rb") as f:
                    total += int(f.read().split()[1])
                known = True
            except (OSError, ValueError, IndexError):
                pass
        return total / 1e9 if known else None

    def kill_everything_else(self):
        """SIGKILL every process in the namespace but us and init; reap them all.

        Returns how many there were. The usual case, a run that started nothing, is proven with
        one syscall: the server is the subreaper of everything it forked (a process whose
        parent dies is handed to its nearest living subreaper ancestor, never past us to
        init), so every process a run left is a descendant of one of our children, living or
        zombie; ``waitpid`` failing with ECHILD means there is none. Anything else takes the
        full sweep over /proc.
        """
        try:
            reaped, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, self.pid)]
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:  # nothing left to signal (the one stray was a zombie)
            pass
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        return len(others) + (1 if reaped else 0)

    @staticmethod
    def clean_tmp():
        for d in ("/tmp", "/dev/shm"):
            try:
                entries = os.listdir(d)
            except OSError:
                continue
            for name in entries:
                path = os.path.join(d, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.unlink(path)
                    except OSError:
                        pass

    def child(self):
        """The forked run: finish isolating, run the program, exit like the interpreter."""
        try:
            _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # the server stays undumpable; not the run
            os.setsid()
            os.close(self.sock_fd)
            os.close(self.devnull)
            os.chdir("/workspace")
            fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
            os.write(fd, b"1000")  # under memory pressure the run dies first, never the server
            os.close(fd)
            for res, value in self.rlimits:
                resource.setrlimit(res, value)
            if self.fprog_ref is not None and _libc.prctl(
                PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self.fprog_ref, 0, 0
            ):
                raise OSError(ctypes.get_errno(), "could not load the child seccomp filter")
            sys.path[0] = "/workspace"
            sys.modules["__main__"] = self.main
            # The collector starts from nothing: the server's objects (and its allocation count,
            # which would trigger an immediate collection) are not the program's, and scanning
            # them would copy their pages.
            gc.freeze()
            gc.enable()
        except BaseException as e:  # setup failed: say so on the run's stderr, exit 126
            try:
                os.write(2, f"referee fork server: could not start the run: {e!r}\n".encode())
            finally:
                os._exit(126)
        try:
            if self.compile_error is not None:
                raise self.compile_error
            exec(self.compiled, self.main.__dict__)
            code = 0
        except SystemExit as e:
            code = _exit_code(e.code)
        except BaseException as e:
            import traceback

            # Drop this file's own frame: the traceback starts at the program, as with `python`.
            tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
            if self.compile_error is not None:
                tb = None
            traceback.print_exception(type(e), e, tb)
            code = 1
        os._exit(_finish(code))


def _trim_heap():
    """Give the malloc heap's free pages back to the kernel.

    ``fork()`` copies a page-table entry for every resident anonymous page of the server (the
    largest single cost of a run); the start-up's freed memory (compiling the preloaded
    modules, say) is ~0.7 MB of such pages that no run needs.
    """
    trim = getattr(_libc, "malloc_trim", None)  # glibc only
    if trim is not None:
        trim(0)


def _exit_code(value):
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    try:
        print(value, file=sys.stderr)
    except Exception:
        pass
    return 1


def _finish(code):
    """What the interpreter does at exit: join threads, run atexit, flush stdio."""
    try:
        threading = sys.modules.get("threading")
        if threading is not None and threading.active_count() > 1:
            threading._shutdown()
        if atexit._ncallbacks():
            atexit._run_exitfuncs()
    except SystemExit as e:
        code = _exit_code(e.code)
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            if code == 0:
                code = 120  # like CPython when flushing stdout fails at exit
    return code


def main():
    sock = socket.socket(fileno=int(sys.argv[1]))
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # Not dumpable: a run cannot open /proc/<server>/mem or ptrace us even as the same uid.
    _prctl(PR_SET_DUMPABLE, 0)
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    server = Server(sock)
    try:
        _serve(server)
    except BaseException:  # anything that ends the server is an infrastructure failure: say why
        import traceback

        try:
            sock.send(json.dumps({"fatal": traceback.format_exc()[-4000:]}).encode())
        except OSError:
            pass
        raise


def _serve(server):
    server.handshake()
    # Move every object made so far out of the collector's reach: a child's garbage collection
    # then does not touch (and copy) the server's pages.
    gc.collect()
    gc.freeze()
    gc.disable()  # re-enabled in each child; the server itself makes no cycles worth collecting
    _trim_heap()
    server.serve()


if __name__ == "__main__":
    main()
