"""An S3-compatible server on 127.0.0.1 for the object-storage tests: moto's server mode in
this process (``ThreadedMotoServer``), and a proxy in front of it that can be SIGKILLed
mid-upload (``tests/tcp_proxy.py``).

The fixtures (``s3_server``, ``s3``) are in ``tests/conftest.py``; they skip, saying why, only
where moto or s3fs is not installed (both are pinned in requirements.lock, so CI runs them).
s3fs is pointed at the server the way a user points it at MinIO or Ceph: ``AWS_ENDPOINT_URL``
and the credentials in the environment (README, "Object storage").
"""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROXY = Path(__file__).with_name("tcp_proxy.py")
MISSING = [m for m in ("moto", "s3fs", "flask") if importlib.util.find_spec(m) is None]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def s3_env(endpoint: str) -> dict[str, str]:
    """What a user sets to use an S3-compatible server: its URL and credentials. One attempt
    per request (AWS_MAX_ATTEMPTS) keeps a dead server's failure quick."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "referee-test",
        "AWS_SECRET_ACCESS_KEY": "referee-test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_MAX_ATTEMPTS": "1",
    }


def fresh_s3fs() -> Any:
    """An s3fs file system made now, reading the environment as it is now: fsspec caches its
    instances, and one made for another endpoint would keep talking to it. (Making one costs
    a botocore client, most of a second: tests that keep the fixture's endpoint use
    :func:`s3fs_now`.)"""
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()
    return s3fs.S3FileSystem()


def s3fs_now() -> Any:
    """The cached s3fs file system (the one referee's calls get too), its listings forgotten so
    that it reports what the server holds now."""
    import s3fs

    fs = s3fs.S3FileSystem()
    fs.invalidate_cache()
    return fs


def new_bucket() -> str:
    """A bucket of its own for a test (the server is shared by the session)."""
    name = f"referee-{uuid.uuid4().hex[:12]}"
    s3fs_now().mkdir(name)
    return name


class MotoServer:
    """moto's S3 in server mode, on 127.0.0.1 and a free port, in this process (its state lives
    in this process's memory, so it outlives any proxy in front of it)."""

    #: The environment the cached s3fs file system was last made for (tests/conftest.py).
    env: dict[str, str] | None = None

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        # One log line per request would bury a failing test's own output.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)

        self.port = free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._server.stop()


@dataclass
class Proxy:
    """``tests/tcp_proxy.py`` in a process of its own, in front of ``target``."""

    port: int
    process: subprocess.Popen[str]

    @classmethod
    def start(cls, target: int, port: int | None = None, die_after: int | None = None) -> Proxy:
        port = port or free_port()
        args = [sys.executable, str(PROXY), str(port), str(target), "--lifetime", "60"]
        if die_after is not None:
            args += ["--die-after", str(die_after)]
        process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        if process.stdout.readline().strip() != "ready":
            process.kill()
            raise RuntimeError("the proxy did not start")
        return cls(port, process)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def died_by_sigkill(self, timeout: float = 10.0) -> tuple[bool, str]:
        """Whether it ended by SIGKILL, and what it printed (``dying after N bytes``)."""
        code = self.process.wait(timeout)
        assert self.process.stdout is not None
        return code == -signal.SIGKILL, self.process.stdout.read()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        if self.process.stdout is not None:
            self.process.stdout.close()
