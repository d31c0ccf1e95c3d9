"""A real Ray cluster on this machine (two nodes, or three), for the module that asks for it.

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
    """The head's address and the ``ray start`` process groups (head first)."""

    def __init__(self, auth_mode: str, nodes: int = 2, env: dict[str, str] | None = None) -> None:
        self.nodes = nodes
        self.tmp = Path(tempfile.mkdtemp(prefix="referee-ray-", dir="/tmp"))
        self.env = dict(os.environ)
        self.env.update({
            "RAY_AUTH_MODE": auth_mode,
            "RAY_USAGE_STATS_ENABLED": "0",
            # Ray's memory monitor counts the whole machine's memory: on a machine shared with
            # other work it kills the tests' actors for memory other programs hold.
            "RAY_memory_monitor_refresh_ms": "0",
            "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p),
        })  # fmt: skip
        self.env.update(env or {})
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
        out, _ = proc.communicate(timeout=300)  # a node starts slowly on a loaded machine
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
        for name in "bcdefgh"[: self.nodes - 1]:
            self._start(f"--address={self.address}", f'--resources={{"node_{name}": 1}}')

    def kill_node(self, i: int) -> None:
        """SIGKILL every process of node ``i`` (its raylet, object store, workers): the node is
        lost as when its machine goes away."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.groups[i], signal.SIGKILL)

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


@contextlib.contextmanager
def joined_cluster(nodes: int, env: dict[str, str] | None = None) -> Iterator[LocalCluster]:
    """``nodes`` raylets, the driver joined to them; everything stopped afterwards."""
    import ray

    cluster = LocalCluster(_driver_auth_mode(), nodes, env)
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE",)}
    try:
        cluster.start()
        os.environ["RAY_AUTH_MODE"] = cluster.env["RAY_AUTH_MODE"]
        ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
        deadline = time.monotonic() + 60
        while sum(1 for n in ray.nodes() if n.get("Alive")) < nodes:
            assert time.monotonic() < deadline, "a node never joined"
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


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LocalCluster]:
    """Two nodes, the driver joined to them; everything stopped after the module."""
    with joined_cluster(2) as cluster:
        yield cluster


# The node-death detection of the head (GCS): a node that misses 3 health checks 2 s apart is
# dead (Ray's default waits for 5 checks 3 s apart); loose enough for a machine at load 4.
FAST_NODE_DEATH = {
    "RAY_health_check_period_ms": "2000",
    "RAY_health_check_timeout_ms": "2000",
    "RAY_health_check_failure_threshold": "3",
}


@pytest.fixture(scope="module")
def three_nodes() -> Iterator[LocalCluster]:
    """Three raylets (``node_a`` the head, ``node_b``, ``node_c``), the driver joined to them,
    node death noticed within seconds; stopped after the module."""
    with joined_cluster(3, FAST_NODE_DEATH) as cluster:
        yield cluster
