"""A shell session's command round trip against its floor (issue 32), for ``make bench-floor``.

    PYTHONPATH=<tree>/src:bench .venv/bin/python bench/floor_shell_session.py [--quick]

A shell episode's system is one long-lived bubblewrap sandbox with a small supervisor in it
(:mod:`referee.domains.shell.supervisor`): each command goes to it as a JSON line on a pipe, it
starts ``/bin/sh -c`` in the sandbox, waits, reads the captured output back and answers with
a JSON line. ``cost`` is :meth:`ShellSession.run` as the environment calls it; the floor is the
same ``/bin/sh -c`` forked from a warm host process (``subprocess.run``, no sandbox, no
supervisor): the command's own time plus one fork and exec. Three commands: a quick one
(``cat`` of a small file), one that takes 30 ms and one that takes 200 ms (how promptly the
supervisor sees a command end). Session and floor alternate call by call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from typing import Any

COMMANDS = (
    ("cat of a small file", "cat etc/motd"),
    ("30 ms", "sleep 0.03"),
    ("200 ms", "sleep 0.2"),
)


def rows(quick: bool) -> list[dict[str, Any]]:
    """One row per command: the session's round trip against the bare ``sh -c``."""
    from referee.domains.shell.session import ShellSession
    from referee.sandbox import Sandbox

    n = 30 if quick else 100
    out = []
    with Sandbox() as sb, ShellSession(sb, [("etc/motd", "hi\n", 0o644)]) as session:
        root = str(session.workspace.root)
        for label, command in COMMANDS:
            k = n if command.startswith("cat") else max(5, n // 5)
            cost, floor = [], []
            for i in range(k + 2):  # the first two of each warm up
                t = time.perf_counter()
                r = session.run(command)
                c = time.perf_counter() - t
                assert r.exit_code == 0 and not r.lost, r
                t = time.perf_counter()
                subprocess.run(["/bin/sh", "-c", command], cwd=root, stdout=subprocess.PIPE)
                f = time.perf_counter() - t
                if i >= 2:
                    cost.append(c * 1000)
                    floor.append(f * 1000)
            out.append(
                {
                    "kind": f"shell session: run, {label}",
                    "unit": "step",
                    "cost_ms": statistics.median(cost),
                    "p95_ms": sorted(cost)[int(0.95 * len(cost))],
                    "floor_ms": statistics.median(floor),
                    "n": k,
                    "note": f"`/bin/sh -c '{command}'` forked from a warm host process "
                    "(subprocess.run, no sandbox)",
                }
            )
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    print(json.dumps(rows(ap.parse_args().quick), indent=1))
