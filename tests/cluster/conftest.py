"""A real two-node Ray cluster on this machine, for the module that asks for it.

Two ``ray start`` processes (a head offering the custom resource ``node_a``, a second node
offering ``node_b``), each counted as two CPUs, their own temporary folder and their own process
group, so teardown kills exactly them (``ray stop`` would stop every Ray on the machine,
other people's included). Token authentication follows this process: Ray fixes a process's
mode once (at its first ``ray.init``), so the cluster is started in the mode the driver already
has: off (``RAY_AUTH_MODE=disabled``) in a fresh test process, on (with the token Ray keeps in
``~/.ray``) after an earlier test started a local Ray. The cluster listens on this machine only.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

RAY = str(Path(sys.executable).with_name("ray"))
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalCluster:
    """The head's address and the two ``ray start`` process groups."""

    def __init__(self, auth_mode: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="referee-ray-", dir="/tmp"))
        self.env = dict(os.environ)
        self.env.update({
            "RAY_AUTH_MODE": auth_mode,
            "RAY_USAGE_STATS_ENABLED": "0",
            "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p),
        })  # fmt: skip
        self.groups: list[int] = []
        self.address = ""

    def _start(self, *args: str) -> str:
        common = [
            "--num-cpus=2",  # Ray's bookkeeping: room for two pools' actors on each node
            f"--temp-dir={self.tmp}",
            "--disable-usage-stats",
            "--object-store-memory=150000000",
        ]
        proc = subprocess.Popen(
            [RAY, "start", *args, *common],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its daemons stay in this group: teardown kills the group
        )
        self.groups.append(proc.pid)
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args)} failed:\n{out[-3000:]}")
        return out

    def start(self) -> None:
        port = _free_port()
        out = self._start(
            "--head",
            f"--port={port}",
            "--include-dashboard=false",
            '--resources={"node_a": 1}',
        )
        m = re.search(r"ray start --address='([^']+)'", out)
        self.address = m.group(1) if m else f"127.0.0.1:{port}"
        self._start(f"--address={self.address}", '--resources={"node_b": 1}')

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pgid in self.groups:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, sig)
            if sig == signal.SIGTERM:
                time.sleep(2)
        shutil.rmtree(self.tmp, ignore_errors=True)


def _driver_auth_mode() -> str:
    # Ray's own answer for this process (no public API says it).
    from ray._private.authentication.authentication_utils import is_token_auth_enabled

    return "token" if is_token_auth_enabled() else "disabled"


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LocalCluster]:
    """Two nodes, the driver joined to them; everything stopped after the module."""
    import ray

    cluster = LocalCluster(_driver_auth_mode())
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE",)}
    try:
        cluster.start()
        os.environ["RAY_AUTH_MODE"] = cluster.env["RAY_AUTH_MODE"]
        ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
        deadline = time.monotonic() + 60
        while sum(1 for n in ray.nodes() if n.get("Alive")) < 2:
            assert time.monotonic() < deadline, "the second node never joined"
            time.sleep(0.5)
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            ray.shutdown()
        cluster.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
