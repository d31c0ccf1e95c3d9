"""A memory probe inside a soaked process (``bench/soak.py --probe``, ``bench/soak_ray.py``).

Put this folder first on a process's ``PYTHONPATH`` with ``REFEREE_SOAK_PROBE=DIR`` set, and
Python imports it at start-up (``sitecustomize``): a daemon thread then writes, every
``REFEREE_SOAK_PROBE_EVERY_S`` (default 1 s), ``DIR/probe-PID.json`` (replaced whole) with

* glibc's ``mallinfo2()`` over every arena: ``arena`` (heap bytes from ``brk`` and the
  per-thread arenas' heaps), ``hblkhd`` (bytes in ``mmap``-ed chunks), ``uordblks`` (bytes in
  use), ``fordblks`` (bytes free inside the heaps: fragmentation when it grows), ``keepcost``;
* the number of arenas (``<heap nr=`` in ``malloc_info``) and their sizes;
* ``sys.getallocatedblocks()`` (Python objects' memory blocks), threads, and with
  ``REFEREE_SOAK_TRACEMALLOC=N`` (frames) tracemalloc's traced bytes.

Levers, measured by the soaks: ``REFEREE_SOAK_TRIM_EVERY_S`` calls ``malloc_trim(0)`` that
often; ``MALLOC_ARENA_MAX`` is glibc's own. A file ``DIR/dump-PID-NAME`` asks for a
tracemalloc snapshot, written to ``DIR/snap-PID-NAME.pickle`` (the request file is removed).

Measurement only: nothing here changes what the process computes.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import threading
import time
import tracemalloc
from pathlib import Path


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _Mallinfo2
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    return libc


def _arenas(libc: ctypes.CDLL) -> list[dict[str, int]]:
    """Each arena's ``malloc_info`` totals: size (system bytes) and free bytes."""
    buf = ctypes.c_char_p()
    size = ctypes.c_size_t()
    libc.open_memstream.restype = ctypes.c_void_p
    libc.open_memstream.argtypes = [
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.POINTER(ctypes.c_size_t),
    ]
    libc.fclose.argtypes = [ctypes.c_void_p]
    stream = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    xml = ctypes.string_at(buf, size.value).decode()
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free(ctypes.cast(buf, ctypes.c_void_p))
    out = []
    for heap in re.findall(r'<heap nr="\d+">(.*?)</heap>', xml, re.S):
        current = re.search(r'<system type="current" size="(\d+)"/>', heap)
        rest = re.search(r'<total type="rest" count="\d+" size="(\d+)"/>', heap)
        fast = re.search(r'<total type="fast" count="\d+" size="(\d+)"/>', heap)
        out.append(
            {
                "system": int(current.group(1)) if current else 0,
                "free": (int(rest.group(1)) if rest else 0) + (int(fast.group(1)) if fast else 0),
            }
        )
    return out


def _run(folder: Path, every_s: float, trim_every_s: float) -> None:
    libc = _libc()
    pid = os.getpid()
    target = folder / f"probe-{pid}.json"
    last_trim = time.monotonic()
    trims = 0
    while True:
        now = time.monotonic()
        if trim_every_s > 0 and now - last_trim >= trim_every_s:
            libc.malloc_trim(0)
            trims += 1
            last_trim = now
        m = libc.mallinfo2()
        arenas = _arenas(libc)
        row = {
            "t": time.time(),
            "pid": pid,
            "arena_mb": m.arena / 2**20,
            "mmap_mb": m.hblkhd / 2**20,
            "in_use_mb": m.uordblks / 2**20,
            "free_mb": m.fordblks / 2**20,
            "keepcost_mb": m.keepcost / 2**20,
            "arenas": len(arenas),
            "arena_system_mb": [round(a["system"] / 2**20, 2) for a in arenas],
            "arena_free_mb": [round(a["free"] / 2**20, 2) for a in arenas],
            "py_blocks": sys.getallocatedblocks(),
            "threads": threading.active_count(),
            "trims": trims,
            "traced_mb": tracemalloc.get_traced_memory()[0] / 2**20
            if tracemalloc.is_tracing()
            else None,
        }
        part = target.with_suffix(".part")
        part.write_text(json.dumps(row))
        os.replace(part, target)
        for request in folder.glob(f"dump-{pid}-*"):
            name = request.name.split("-", 2)[2]
            if tracemalloc.is_tracing():
                tracemalloc.take_snapshot().dump(str(folder / f"snap-{pid}-{name}.pickle"))
            request.unlink(missing_ok=True)
        time.sleep(every_s)


def _start() -> None:
    folder = os.environ.get("REFEREE_SOAK_PROBE")
    if not folder:
        return
    frames = int(os.environ.get("REFEREE_SOAK_TRACEMALLOC", "0") or 0)
    if frames > 0:
        tracemalloc.start(frames)
    threading.Thread(
        target=_run,
        args=(
            Path(folder),
            float(os.environ.get("REFEREE_SOAK_PROBE_EVERY_S", "1")),
            float(os.environ.get("REFEREE_SOAK_TRIM_EVERY_S", "0") or 0),
        ),
        name="soak-probe",
        daemon=True,
    ).start()


_start()
