"""The grader's side of a function-level check: runs inside the sandbox, standard library only.

Three modes, each a function the sandboxed program calls:

* ``record``: with the *reference* solution, run the task's own test function against a recorder
  and emit every call's arguments and outcome. Done once per task, when the task is imported.
* ``run``: with the *candidate*, call the entry point on every recorded input (in a shuffled
  order, each on a fresh copy), emit each outcome as plain data, then call the first input again
  to catch answers that depend on call order.
* ``replay``: with *no candidate code at all*, run the task's own test function against a stub
  that returns the candidate's recorded outcomes. Used when the candidate's outputs differ from
  the reference's, so that tests which check properties (any root of a polynomial, say) still
  accept any correct answer.

Outcomes travel as tagged plain data (``encode``/``decode``): only exact builtin types, so an
object with an ``__eq__`` that always says True cannot even be reported, let alone compared. The
comparison happens on the host, on decoded builtins, in code that never ran the candidate. The
candidate can write whatever it likes into the channel; it still never sees an expected output.

Frames are lines on fd 1: ``\\x1eREF <nonce> <json>``. The candidate's own prints go to a capped
sink instead of stdout.
"""

import _signal
import io
import json
import json.encoder
import math
import os
import random
import sys
import time

__all__ = ["decode", "encode", "record", "replay", "run", "same"]

_type = type
_MAX_DEPTH = 64
_MARK = "\x1eREF "


class Unencodable(Exception):
    pass


def encode(x: object, _depth: int = 0) -> list:  # type: ignore[type-arg]
    """Tagged plain data for ``x``; only exact builtin types (no subclasses) are accepted."""
    if _depth > _MAX_DEPTH:
        raise Unencodable("nested too deeply")
    t = _type(x)
    if x is None:
        return ["none"]
    if t is bool:
        return ["bool", bool.__bool__(x)]
    if t is int:
        return ["int", int.__repr__(x)]
    if t is float:
        return ["float", float.__repr__(x)]
    if t is str:
        return ["str", str.__str__(x)]
    if t is bytes:
        return ["bytes", bytes.hex(x)]
    if t is complex:
        return ["complex", float.__repr__(x.real), float.__repr__(x.imag)]
    if t is list or t is tuple:
        return [
            t.__name__,
            [encode(v, _depth + 1) for v in (list.__iter__(x) if t is list else tuple.__iter__(x))],
        ]
    if t is dict:
        return ["dict", [[encode(k, _depth + 1), encode(v, _depth + 1)] for k, v in dict.items(x)]]
    if t is set or t is frozenset:
        return [t.__name__, [encode(v, _depth + 1) for v in t.__iter__(x)]]
    raise Unencodable(f"values of type {t.__module__}.{t.__qualname__} cannot be reported")


def decode(e: object, _depth: int = 0) -> object:
    """The builtin value of tagged plain data; refuses anything malformed."""
    if _depth > _MAX_DEPTH or not isinstance(e, list) or not e or not isinstance(e[0], str):
        raise ValueError("malformed plain data")
    tag = e[0]
    if tag == "none" and len(e) == 1:
        return None
    if len(e) < 2:
        raise ValueError("malformed plain data")
    v = e[1]
    if tag == "bool" and isinstance(v, bool):
        return v
    if tag == "int" and isinstance(v, str):
        return int(v)
    if tag == "float" and isinstance(v, str):
        return float(v)
    if tag == "str" and isinstance(v, str):
        return v
    if tag == "bytes" and isinstance(v, str):
        return bytes.fromhex(v)
    if tag == "complex" and len(e) == 3:
        return complex(float(e[1]), float(e[2]))
    if tag in ("list", "tuple", "set", "frozenset") and isinstance(v, list):
        items = [decode(i, _depth + 1) for i in v]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and isinstance(v, list):
        return {decode(k, _depth + 1): decode(val, _depth + 1) for k, val in v}
    raise ValueError(f"malformed plain data (tag {tag!r})")


def same(a: object, b: object, rel_tol: float = 1e-9, abs_tol: float = 1e-9) -> bool:
    """Whether two encoded values are the same, types included; floats within a tolerance."""
    if not (isinstance(a, list) and isinstance(b, list)) or not a or not b or a[0] != b[0]:
        return a == b
    tag = a[0]
    if tag == "float":
        x, y = float(a[1]), float(b[1])
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol)
    if tag in ("list", "tuple"):
        return len(a[1]) == len(b[1]) and all(
            same(x, y, rel_tol, abs_tol) for x, y in zip(a[1], b[1], strict=True)
        )
    if tag in ("set", "frozenset", "dict"):
        try:
            return decode(a) == decode(b)
        except (ValueError, TypeError):
            return False
    return a == b


# ---- the channel ---------------------------------------------------------------------------
class _Sink(io.TextIOBase):
    """Where the candidate's prints go: kept up to a cap, never mixed with the frames."""

    def __init__(self, cap=1 << 16):
        self.cap, self.size = cap, 0

    def writable(self):
        return True

    def write(self, s):
        self.size += len(s)
        return len(s)


def _json_encoder():
    """``json.dumps`` with its defaults, made once (at preload, in the fork server).

    ``json.dumps`` builds a new C encoder on every call, through three Python frames; each run
    would execute (and copy on write) all of that for every frame. Same text: ASCII-only,
    ``", "``/``": "`` separators. No circular-reference check: frames are trees that the harness
    built itself (outcomes are fresh lists from :func:`encode`).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator: the plain path
        return json.dumps
    encode = make(
        None, None, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    join = "".join

    def dumps(obj):
        return join(encode(obj, 0))

    return dumps


_dumps = _json_encoder()


class _Channel:
    """Frames on fd 1, written in batches: one write per 10 ms (or 64 frames), and at the end.

    Batching spares the host a wake-up per call; the time bound keeps a run that dies midway
    from losing more than its last few results.
    """

    def __init__(self, nonce):
        self.prefix = b"\n" + (_MARK + nonce + " ").encode()
        self._write = os.write
        self._clock = time.monotonic
        self._pending = []
        self._last = self._clock()

    def emit(self, obj, flush=False):
        self._pending.append(self.prefix + _dumps(obj).encode() + b"\n")
        if flush or len(self._pending) >= 64 or self._clock() - self._last > 0.01:
            self.flush()

    def flush(self):
        data = b"".join(self._pending)
        self._pending = []
        self._last = self._clock()
        while data:
            data = data[self._write(1, data) :]


class _CallTimeout(BaseException):
    """The call used its CPU time (ITIMER_PROF)."""


class _CallStalled(BaseException):
    """The call's wall-clock backstop passed (ITIMER_REAL) with CPU time left."""


def _on_prof(signum, frame):
    raise _CallTimeout()


def _on_alarm(signum, frame):
    raise _CallStalled()


#: A call's wall-clock backstop: this many times its CPU limit plus a second (as
#: referee.sandbox.cputime's BACKSTOP_FACTOR and BACKSTOP_SLACK_S).
_BACKSTOP_FACTOR = 3.0
_BACKSTOP_SLACK_S = 1.0
_STRETCH = 1.0


def _arm_alarm():
    """Per-call limits are on CPU time: ITIMER_PROF (the process's CPU, every thread) raises
    :class:`_CallTimeout`; ITIMER_REAL, the wall-clock backstop, raises :class:`_CallStalled`.
    ``_signal`` directly: ``signal.signal`` converts to and from enums on every call, code each
    run would otherwise execute (and copy)."""
    global _STRETCH
    _signal.signal(_signal.SIGPROF, _on_prof)
    _signal.signal(_signal.SIGALRM, _on_alarm)
    try:  # a retry of a starved run stretches the backstop (referee.sandbox.cputime)
        _STRETCH = float(os.environ.get("REFEREE_BACKSTOP_STRETCH", "1"))
    except ValueError:
        _STRETCH = 1.0


def _arm(limit):
    _signal.setitimer(_signal.ITIMER_PROF, limit)
    _signal.setitimer(
        _signal.ITIMER_REAL, (_BACKSTOP_FACTOR * limit + _BACKSTOP_SLACK_S) * _STRETCH
    )


def _disarm():
    _signal.setitimer(_signal.ITIMER_REAL, 0)
    _signal.setitimer(_signal.ITIMER_PROF, 0)


def _run_delay():
    """Seconds this process has been runnable without a CPU (schedstat); None if unknown."""
    try:
        with open("/proc/self/schedstat", "rb") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _stalled(cpu0, wall0):
    """The outcome of a call its backstop ended: ``["stalled", cpu, wall, wait]``; the host
    decides whether the machine starved it (retry) or it waited (a timeout)."""
    wait = _run_delay()
    return ["stalled", time.process_time() - cpu0, time.monotonic() - wall0, wait]


def _name(e):
    t = _type(e)
    return f"{t.__module__}.{t.__qualname__}"


def _outcome(fn, args, kwargs, timeout):
    cpu0, wall0 = time.process_time(), time.monotonic()
    _arm(timeout)
    try:
        result = fn(*args, **kwargs)
    except _CallTimeout:
        return ["timeout"]
    except _CallStalled:
        return _stalled(cpu0, wall0)
    except RecursionError:
        return ["raise", "builtins.RecursionError"]
    except Exception as e:
        return ["raise", _name(e)]
    finally:
        _disarm()
    try:
        return ["ok", encode(result)]
    except Unencodable as e:
        return ["unencodable", str(e)[:200]]


def _quiet():
    sys.stdout = _Sink()
    sys.stderr = _Sink()


# ---- modes ----------------------------------------------------------------------------------
def record(source, test, entry_point, seed, nonce, timeout=10.0):
    """Run ``check(candidate)`` of the task's test with the reference; emit each call."""
    chan = _Channel(nonce)
    ns = {"__name__": "__main__"}
    exec(compile(source, "/workspace/reference.py", "exec"), ns)
    reference = ns[entry_point]
    calls = []

    def recorder(*args, **kwargs):
        enc_in = [encode(list(args)), encode(dict(kwargs))]
        _arm(timeout)
        try:
            result = reference(*args, **kwargs)
        except (_CallTimeout, _CallStalled):
            raise
        except Exception as e:
            calls.append([*enc_in, ["raise", _name(e)]])
            raise
        finally:
            _disarm()
        calls.append([*enc_in, ["ok", encode(result)]])
        return result

    _arm_alarm()
    random.seed(seed)
    exec(compile(test, "/workspace/test.py", "exec"), ns)
    ns["check"](recorder)
    chan.emit({"calls": calls}, flush=True)


def run(source, entry_point, inputs, order, nonce, timeout=5.0, timeouts=None):
    """Call the candidate's entry point on each input of ``inputs`` in ``order``; emit outcomes.

    ``timeouts``, where given, is each input's own time limit (else ``timeout`` for all)."""
    chan = _Channel(nonce)
    _arm_alarm()
    ns = {"__name__": "__main__"}
    _quiet()
    try:
        exec(compile(source, "/workspace/solution.py", "exec"), ns)
        fn = ns[entry_point]
    except BaseException as e:  # the candidate did not even define the function
        chan.emit({"load_error": _name(e)}, flush=True)
        return
    _calls(chan, fn, inputs, order, timeout, timeouts)


_CHANNEL = None


def begin(nonce):
    """Before a candidate's code runs as the program itself: quiet stdio, alarms, load errors.

    Used when the candidate's source is part of the program (so the fork server compiles it
    once, before the fork); an exception escaping the candidate's module code is reported as a
    load error by the hook.
    """
    global _CHANNEL
    _CHANNEL = _Channel(nonce)
    _arm_alarm()
    _quiet()

    def hook(kind, value, tb, _chan=_CHANNEL):
        _chan.emit({"load_error": _name(value)}, flush=True)

    sys.excepthook = hook


def run_loaded(namespace, entry_point, inputs, order, timeout=5.0):
    """The calls of :func:`run`, for a candidate already loaded into ``namespace``."""
    chan = _CHANNEL
    if entry_point not in namespace:
        chan.emit({"load_error": "builtins.NameError"}, flush=True)
        return
    _calls(chan, namespace[entry_point], inputs, order, timeout)


def _calls(chan, fn, inputs, order, timeout, timeouts=None):
    for i in order:
        args, kwargs = decode(inputs[i][0]), decode(inputs[i][1])
        limit = timeouts[i] if timeouts else timeout
        chan.emit({"i": i, "out": _outcome(fn, args, kwargs, limit)})
    if order:
        i = order[0]
        args, kwargs = decode(inputs[i][0]), decode(inputs[i][1])
        limit = timeouts[i] if timeouts else timeout
        chan.emit({"recheck": i, "out": _outcome(fn, args, kwargs, limit)})
    chan.emit({"done": True}, flush=True)


class _Unrecorded(Exception):
    pass


def replay(prompt, test, entry_point, table, seed, nonce):
    """Run the task's own ``check`` against recorded outcomes only. No candidate code runs here."""
    chan = _Channel(nonce)
    recorded = [(decode(a), decode(k), out) for a, k, out in table]
    ns = {"__name__": "__main__"}
    exec(compile(prompt, "/workspace/prompt.py", "exec"), ns)

    def candidate(*args, **kwargs):
        for a, k, out in recorded:
            if a == list(args) and k == dict(kwargs):
                if out[0] == "ok":
                    return decode(out[1])
                raise _Unrecorded(f"the candidate's call ended with {out[0]}")
        raise _Unrecorded("the test made a call the candidate was never asked")

    random.seed(seed)
    exec(compile(test, "/workspace/test.py", "exec"), ns)
    try:
        ns["check"](candidate)
    except AssertionError:
        chan.emit({"replay": "failed"}, flush=True)
        return
    except _Unrecorded as e:
        chan.emit({"replay": "failed", "why": str(e)}, flush=True)
        return
    except Exception as e:
        chan.emit({"replay": "failed", "why": _name(e)}, flush=True)
        return
    chan.emit({"replay": "passed"}, flush=True)


def settled(out: object) -> object:
    """``out`` for comparing two calls: a stalled call's timings dropped (``["stalled"]``)."""
    if isinstance(out, list) and out and out[0] == "stalled":
        return ["stalled"]
    return out


def stalls(found: list) -> list:  # type: ignore[type-arg]
    """``(cpu, wall, wait)`` of each call in ``found`` (frames) that its wall-clock backstop
    ended with CPU time left (wait: its run delay, None if unknown). Malformed ones are
    skipped."""
    out = []
    for fr in found:
        o = fr.get("out")
        if isinstance(o, list) and len(o) == 4 and o[0] == "stalled":
            cpu, wall, wait = o[1], o[2], o[3]
            if all(_type(v) in (int, float) for v in (cpu, wall)) and (
                wait is None or _type(wait) in (int, float)
            ):
                out.append((float(cpu), float(wall), None if wait is None else float(wait)))
    return out


def frames(stdout: str, nonce: str) -> list:  # type: ignore[type-arg]
    """The frames of ``nonce`` in a run's stdout, in order."""
    prefix = _MARK + nonce + " "
    out = []
    for line in stdout.split("\n"):
        if line.startswith(prefix):
            try:
                frame = json.loads(line[len(prefix) :])
            except (ValueError, RecursionError):
                continue  # anything malformed (the candidate can write here too) is ignored
            if isinstance(frame, dict):
                out.append(frame)
    return out
