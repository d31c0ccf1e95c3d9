"""A named pool shared by every process of a trainer: :func:`named_pool` and :class:`NamedPool`.

A trainer runs its reward code in many processes (veRL's reward workers, NeMo RL's environment
actors, several drivers of one job). Each making its own :class:`~referee.cluster.SandboxPool`
of N actors would hold workers x N actors; here they share one. The pool lives in a *host*
actor (:class:`PoolHost`) with a name in the Ray job's namespace, made with ``get_if_exists``:
the first process to ask makes it, every later one gets the same actor, so the cluster holds
N sandbox actors (plus the host, which reserves no CPU) however many processes judge on it.

Lifetime: the host is a detached actor, so it outlives the process that happened to make it.
Each process ``attach``-es on first use and ``detach``-es when it closes the pool (at exit for
:func:`~referee.cluster.shared.shared_pool`'s); when the last one detaches, the host shuts its
sandbox actors down and exits. A process killed without detaching leaves its attachment: the
host then also exits after ``orphan_s`` seconds without a call (default one hour), and
:func:`shutdown_named_pool` (or ``ray stop``) removes it at once.

The host's own node going away takes the host with it: the next call of each process makes a
new host (the same name, ``get_if_exists``) and sends its samples again there; a sample
reaches its caller's results once.

>>> pool = named_pool("/data/tasks.jsonl", actors=4)                 # doctest: +SKIP
>>> pool.verify_many([(task, completion)], deadline_s=30)            # doctest: +SKIP
[Verdict(task_id='HumanEval/0', reward=1.0, passed=True, ...)]
>>> pool.close()          # detach; the last process to detach shuts the host down  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from referee.cluster.connect import connect
from referee.errors import ConfigError, SandboxError
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["NamedPool", "PoolHost", "named_pool", "pool_name", "shutdown_named_pool"]

#: Seconds a host with attached processes waits without any call before it takes them for
#: dead and exits.
ORPHAN_S = 3600.0
#: Times a call is sent again after the host died under it (a new host is made each time).
HOST_RETRIES = 2


def pool_name(tasks: str, actors: int) -> str:
    """The host's name for a task file and a pool size (the same in every process of a job)."""
    digest = hashlib.sha256(f"{os.path.abspath(tasks)}\0{actors}".encode()).hexdigest()[:16]
    return f"referee-pool-{digest}"


class PoolHost:
    """The actor that holds one :class:`~referee.cluster.SandboxPool` for many processes.

    ``pool_kwargs`` go to the pool (``actors``, ``max_actors``, ``workers_per_actor``...).
    Async methods: Ray runs it as an async actor, so calls from many processes interleave."""

    def __init__(self, tasks: str, pool_kwargs: dict[str, Any], orphan_s: float = ORPHAN_S):
        from referee.cluster.pool import SandboxPool

        self.tasks = tasks
        self.pool_kwargs = dict(pool_kwargs)
        self.pool = SandboxPool(tasks, **pool_kwargs)
        self.clients: set[str] = set()
        self.orphan_s = orphan_s
        self.last_call = time.monotonic()
        self.calls = 0
        self._watch: asyncio.Task[None] | None = None
        self._background: asyncio.Future[None] | None = None

    def _touch(self) -> None:
        self.last_call = time.monotonic()
        if self._watch is None:  # made on the actor's own event loop, at its first call
            self._watch = asyncio.ensure_future(self._orphans())

    async def _orphans(self) -> None:
        while True:
            await asyncio.sleep(min(60.0, self.orphan_s / 4))
            if time.monotonic() - self.last_call > self.orphan_s:
                await self._exit(0.0)

    async def _exit(self, after_s: float) -> None:
        """Close the pool (its actors) and end this actor, ``after_s`` from now (so the call
        that asked for it is answered first)."""
        import ray

        await asyncio.sleep(after_s)
        await asyncio.to_thread(self.pool.close)
        ray.kill(ray.get_runtime_context().current_actor, no_restart=True)

    def _exit_soon(self) -> None:
        task = asyncio.ensure_future(self._exit(0.2))
        self._background = task  # held: the loop keeps only a weak reference

    async def attach(self, client: str) -> dict[str, Any]:
        """Count ``client`` as using the pool; what the pool was made with."""
        self._touch()
        self.clients.add(client)
        return {"tasks": self.tasks, "pool": self.pool_kwargs, "clients": len(self.clients)}

    async def detach(self, client: str) -> int:
        """``client`` is done; the last one out shuts the pool down and ends the host."""
        self._touch()
        self.clients.discard(client)
        left = len(self.clients)
        if not left:
            self._exit_soon()
        return left

    async def verify(
        self,
        samples: Sequence[tuple[str, str]],
        deadline_s: float | None = None,
        within_s: float | None = None,
    ) -> list[Verdict]:
        self._touch()
        self.calls += 1
        return await self.pool.verify(samples, deadline_s=deadline_s, within_s=within_s)

    async def health(self) -> list[dict[str, Any]]:
        self._touch()
        return await asyncio.to_thread(self.pool.health)

    async def stats(self) -> dict[str, Any]:
        self._touch()
        got = await asyncio.to_thread(self.pool.stats)
        return {**got, "clients": len(self.clients), "calls": self.calls, "pid": os.getpid()}

    async def shutdown(self) -> None:
        """Shut the pool down and end the host now, whoever is attached."""
        self._exit_soon()


class NamedPool:
    """One process's handle on a :class:`PoolHost` (see the module docstring): the
    ``verify_many``/``verify``/``health`` a :class:`~referee.cluster.SandboxPool` offers for
    judging (sessions need a pool of the process's own)."""

    def __init__(self, tasks: str, name: str, pool_kwargs: dict[str, Any], orphan_s: float):
        import ray

        self._ray = ray
        self.tasks = tasks
        self.name = name
        self.pool_kwargs = pool_kwargs
        self.orphan_s = orphan_s
        self.client = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        self._host: Any = None
        self._closed = False
        self._host_now()

    def _host_now(self, dead: Any = None) -> Any:
        """The live host, got or made (again, when ``dead`` is the one that died)."""
        with self._lock:
            if self._host is not None and self._host is not dead:
                return self._host
            ray = self._ray
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            cls = ray.remote(PoolHost).options(
                name=self.name,
                lifetime="detached",
                get_if_exists=True,
                num_cpus=0,
                max_concurrency=1000,
                max_restarts=0,
                # Near its first caller (a driver's node, usually the head), soft: anywhere else
                # when that node is gone.
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True),
            )
            for _ in range(1 + HOST_RETRIES):
                host = cls.remote(self.tasks, self.pool_kwargs, self.orphan_s)
                try:
                    info = ray.get(host.attach.remote(self.client), timeout=300)
                except ray.exceptions.RayActorError:
                    continue  # the host was exiting (its last client left): make a new one
                break
            else:
                raise SandboxError(f"the shared Ray pool {self.name!r} could not be started")
            if info["tasks"] != self.tasks or info["pool"] != self.pool_kwargs:
                ray.get(host.detach.remote(self.client), timeout=30)
                raise ConfigError(
                    f"the shared Ray pool {self.name!r} was made with {info['pool']} on "
                    f"{info['tasks']}, this process asks for {self.pool_kwargs} on {self.tasks}; "
                    "give every process of the job the same pool settings"
                )
            self._host = host
            return host

    def _call(self, method: str, *args: Any, timeout: float | None = None) -> Any:
        if self._closed:
            raise ConfigError("this shared Ray pool is closed; make a new one")
        host = self._host_now()
        for attempt in range(1 + HOST_RETRIES):
            try:
                return self._ray.get(getattr(host, method).remote(*args), timeout=timeout)
            except self._ray.exceptions.RayActorError:
                if attempt == HOST_RETRIES:
                    raise SandboxError(
                        f"the shared Ray pool's host died {attempt + 1} time(s) under the call; "
                        "the samples were not judged"
                    ) from None
                host = self._host_now(dead=host)
        raise AssertionError("unreachable")

    def verify_many(
        self,
        items: Iterable[tuple[Task, str]],
        *,
        deadline_s: float | None = None,
        within_s: float | None = None,
    ) -> list[Verdict]:
        """As :meth:`SandboxPool.verify_many`. After the host died the samples are sent again
        (a new host), so each still gets one verdict; ``within_s`` then counts from the
        first submission."""
        samples = [(task.id, completion) for task, completion in items]
        start = time.time()
        for attempt in range(1 + HOST_RETRIES):
            left = None if within_s is None else max(0.0, within_s - (time.time() - start))
            host = self._host_now()
            try:
                got: list[Verdict] = self._ray.get(host.verify.remote(samples, deadline_s, left))
                return got
            except self._ray.exceptions.RayActorError:
                if attempt == HOST_RETRIES:
                    break
                self._host_now(dead=host)
        raise SandboxError(
            f"the shared Ray pool's host died {1 + HOST_RETRIES} time(s) under a batch of "
            f"{len(samples)} sample(s); they were not judged"
        )

    async def verify(
        self,
        samples: Sequence[tuple[str, str]],
        *,
        deadline_s: float | None = None,
        within_s: float | None = None,
    ) -> list[Verdict]:
        """``(task_id, completion)`` samples, as :meth:`SandboxPool.verify`."""
        got: list[Verdict] = await self._host_now().verify.remote(
            list(samples), deadline_s, within_s
        )
        return got

    def health(self, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """The shared pool's :meth:`SandboxPool.health`."""
        got: list[dict[str, Any]] = self._call("health", timeout=timeout_s)
        return got

    def stats(self) -> dict[str, Any]:
        """The shared pool's :meth:`SandboxPool.stats`, with ``clients`` attached and the
        host's ``pid``."""
        got: dict[str, Any] = self._call("stats", timeout=30.0)
        return got

    def close(self) -> None:
        """Detach this process (the last one to detach ends the pool). Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            self._ray.get(self._host.detach.remote(self.client), timeout=30)
        except Exception:  # the host is gone already: nothing left to detach from
            pass

    def __enter__(self) -> NamedPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def named_pool(
    tasks: str,
    actors: int,
    *,
    name: str | None = None,
    orphan_s: float = ORPHAN_S,
    address: str | None = None,
    **pool_kwargs: Any,
) -> NamedPool:
    """This process's handle on the job's shared pool of ``actors`` sandbox actors holding the
    tasks of the file ``tasks`` (made by the first process that asks; see the module).
    ``name``: the host's name (default :func:`pool_name`); ``pool_kwargs``: the
    :class:`~referee.cluster.SandboxPool`'s other settings (``max_actors``...), the same in
    every process."""
    if actors < 1:
        raise ConfigError(f"a Ray pool needs at least 1 actor, got {actors}")
    connect(address)
    return NamedPool(
        str(tasks),
        name or pool_name(str(tasks), actors),
        {"actors": actors, **pool_kwargs},
        orphan_s,
    )


def shutdown_named_pool(name: str) -> bool:
    """End the job's shared pool ``name`` now (its sandbox actors too); False when there is
    none."""
    import ray

    try:
        host = ray.get_actor(name)
    except ValueError:
        return False
    try:
        ray.get(host.shutdown.remote(), timeout=30)
    except ray.exceptions.RayActorError:
        pass
    return True
