"""``SandboxPool``: verification and environment sessions spread over Ray actors.

The pool starts ``actors`` :class:`~referee.cluster.actor.SandboxActor` actors, each holding a
warm sandbox, placed with Ray's ``SPREAD`` strategy (or on nodes that offer a custom resource).
A batch is cut into chunks; each chunk goes to the actor with the fewest chunks in flight (ties
in turn), so batches of one are spread as well as big ones. At most ``max_in_flight`` chunks are
out at a time: a bigger batch waits for room instead of queueing in Ray without bound.

When an actor dies under a chunk (``RayActorError``: its process was killed, its node went
away), the chunk's samples are judged on another actor, at most ``max_retries`` times, after
which each gets an infrastructure verdict (:meth:`Verdict.infra`): never a pass, never a silent
0. The dead actor is probed (Ray restarts it when ``max_restarts`` allows) and, when it does not
come back, replaced by a new one, so the pool recovers. Results are kept by the sample's place
in its call and the first verdict wins: a retried sample is judged again, but it reaches the
results once (a late reply is dropped and counted in :meth:`SandboxPool.stats`).

**Deadlines.** ``deadline_s`` bounds a sample's run from when a sandbox worker takes it;
``within_s`` is an absolute deadline set when the sample is submitted, so it counts the time the
sample waited in the pool and in its actor's queue: a sample whose ``within_s`` passed before a
worker took it is not run and gets an infrastructure verdict saying so (a deadline outcome,
never a pass or a 0 the model earned); one that starts runs for what is left of it at most.

**Autoscaling.** With ``max_actors`` above ``actors``, the pool grows when its queue depth
(samples submitted and not yet judged) exceeds ``scale_up_depth`` per actor, up to
``max_actors`` (and only while the cluster has room for another actor), and retires an actor
that has been idle (nothing in flight, no session) for ``idle_s``, down to ``actors``.

The pool's own work runs on an event loop in a background thread: ``await pool.verify(...)``
works from any event loop and :meth:`SandboxPool.verify_many` from synchronous code (a TRL
reward function: ``reward_function(pool, tasks)``).

>>> connect("local")                                                  # doctest: +SKIP
>>> with SandboxPool(tasks, actors=2, workers_per_actor=2) as pool:   # doctest: +SKIP
...     verdicts = pool.verify_many([(task, "    return 1\\n")])
...     session = pool.open_session("code", task.id)
...     step = await session.step({"role": "assistant", "content": "..."})
"""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from referee.cluster.actor import SandboxActor, TaskSource, expired_reason, load_tasks
from referee.cluster.connect import connect
from referee.cluster.session import PoolSession, call_remote
from referee.errors import ConfigError, SandboxError
from referee.service.engine import GRACE_S, UnknownTasks
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["SandboxPool"]

T = TypeVar("T")
VERIFIER = "cluster"
#: Concurrent calls one actor accepts (chunks, session steps, health probes).
ACTOR_CONCURRENCY = 1000


@dataclass
class _Slot:
    """One actor of the pool, as the pool sees it."""

    index: int
    handle: Any
    in_flight: int = 0
    sessions: int = 0
    healthy: bool = True
    replaced: int = 0
    #: Started by the autoscaler and not ready yet: not given work.
    starting: bool = False
    #: Monotonic time since which nothing has been in flight on it (for scale-down).
    idle_since: float = field(default_factory=time.monotonic)
    probe: asyncio.Task[None] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class _Deadline:
    """A call's absolute deadline (``within_s`` from ``submitted``, epoch seconds: the actors'
    clocks on other nodes read the same time, to within the cluster's clock sync)."""

    submitted: float
    expires_at: float | None

    def passed(self) -> bool:
        return self.expires_at is not None and time.time() >= self.expires_at

    def verdict(self, task_id: str) -> Verdict:
        assert self.expires_at is not None
        return Verdict.infra(task_id, expired_reason(self.expires_at), VERIFIER)


class SandboxPool:
    """Warm sandbox actors on a Ray cluster; see the module docstring.

    ``tasks``: Task objects, or a task file path or URL each actor reads itself.
    ``placement``: ``"spread"`` (Ray's SPREAD strategy), a custom resource name (each actor
    takes one unit: one actor per unit a node offers), or a list of names (actor ``i`` takes
    ``placement[i % len]``). ``workers_per_actor``: sandbox workers in each actor (default: its
    node's CPUs + 1); ``num_cpus_per_actor``: the CPUs Ray reserves for each.
    ``max_restarts``: Ray's own restarts of a dead actor before the pool replaces it with a new
    one (0, the default: the pool replaces it at once; above 0 Ray logs a warning that the
    actor's arguments live in the object store, which the pool keeps alive for as long as it
    lives). ``chunk_size``: samples per remote call (default: about two chunks per actor, at most
    ``4 * workers_per_actor``). ``max_in_flight``: chunks out at a time, over all calls
    (default: 4 per live actor). ``address``: joined with :func:`~referee.cluster.connect`
    when Ray is not initialised yet. ``max_actors``, ``scale_up_depth``, ``idle_s``: the
    autoscaler (see the module docstring; off while ``max_actors`` is ``actors``).
    """

    def __init__(
        self,
        tasks: TaskSource,
        *,
        actors: int = 2,
        workers_per_actor: int | None = None,
        placement: str | Sequence[str] = "spread",
        max_retries: int = 2,
        max_in_flight: int | None = None,
        chunk_size: int | None = None,
        num_cpus_per_actor: float = 1.0,
        max_restarts: int = 0,
        deadline_cap_s: float = 60.0,
        call_timeout_s: float = 5.0,
        run_timeout_s: float = 30.0,
        ready_timeout_s: float = 120.0,
        address: str | None = None,
        max_actors: int | None = None,
        scale_up_depth: float = 8.0,
        idle_s: float = 60.0,
        scale_every_s: float = 0.5,
    ) -> None:
        if actors < 1:
            raise ConfigError(f"actors must be at least 1, got {actors}")
        max_actors = actors if max_actors is None else max_actors
        if max_actors < actors:
            raise ConfigError(
                f"max_actors ({max_actors}) is below actors ({actors}); the pool scales "
                "between actors and max_actors"
            )
        if scale_up_depth <= 0 or idle_s < 0:
            raise ConfigError("scale_up_depth must be above 0 and idle_s 0 or more")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {max_retries}")
        connect(address)
        import ray

        self._ray = ray
        if isinstance(tasks, str):  # read here too: a bad file fails before any actor starts
            self._task_ids = {t.id for t in load_tasks(tasks)}
        else:
            listed = [t if isinstance(t, Task) else Task.model_validate(t) for t in tasks]
            self._task_ids = {t.id for t in listed}
            # Plain data, put once: every actor (and every restart) reads the same object.
            tasks = [t.model_dump(mode="json") for t in listed]
        self._tasks_ref = ray.put(tasks)
        self._check_room(ray, actors, num_cpus_per_actor, placement)
        self.placement = [placement] if isinstance(placement, str) else list(placement)
        if not self.placement:
            raise ConfigError("placement needs 'spread' or at least one resource name")
        self.workers_per_actor = workers_per_actor
        self.max_retries = max_retries
        self.chunk_size = chunk_size
        self.min_actors = actors
        self.max_actors = max_actors
        self.scale_up_depth = scale_up_depth
        self.idle_s = idle_s
        self.scale_every_s = scale_every_s
        #: Chunks one actor may have out at a time (the pool-wide window is this per actor).
        self.per_actor = max(1, math.ceil(max_in_flight / actors)) if max_in_flight else 4
        self.max_in_flight = max_in_flight or 4 * actors
        #: Samples submitted and not yet settled: the queue depth the autoscaler reads.
        self.pending = 0
        self._stats = {
            "submitted": 0,
            "settled": 0,
            "expired_in_queue": 0,
            "chunks_retried": 0,
            "duplicates_dropped": 0,
            "scaled_up": 0,
            "scaled_down": 0,
            "replaced": 0,
            "scale_up_blocked": 0,
        }
        self.deadline_cap_s = deadline_cap_s
        self.ready_timeout_s = ready_timeout_s
        self._actor_kwargs = {
            "workers": workers_per_actor,
            "deadline_cap_s": deadline_cap_s,
            "call_timeout_s": call_timeout_s,
            "run_timeout_s": run_timeout_s,
        }
        self._options = {
            "max_concurrency": ACTOR_CONCURRENCY,
            "max_restarts": max_restarts,
            "max_task_retries": 0,  # the pool retries, on another actor
            "num_cpus": num_cpus_per_actor,
        }
        self._turn = itertools.count()
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="referee-pool", daemon=True
        )
        self._thread.start()
        self._background: set[asyncio.Future[None]] = set()
        self._room = asyncio.Event()  # set whenever a chunk ends or an actor comes up
        self._indices = itertools.count(actors)
        self._slots = [_Slot(i, self._new_actor(i)) for i in range(actors)]
        self._scaler: Future[None] | None = None
        try:
            self._submit(self._ready(self._slots)).result()
        except BaseException:
            self.close()
            raise
        if self.max_actors > self.min_actors:
            self._scaler = self._submit(self._autoscale())

    # ---- actors ----------------------------------------------------------------------------
    @staticmethod
    def _check_room(ray: Any, actors: int, cpus: float, placement: str | Sequence[str]) -> None:
        """Refuse at once a pool the cluster cannot hold (Ray would wait for room forever)."""
        have = ray.cluster_resources()
        if actors * cpus > have.get("CPU", 0.0):
            raise ConfigError(
                f"{actors} sandbox actors of {cpus:g} CPU each do not fit the cluster's "
                f"{have.get('CPU', 0.0):g} CPUs; ask for fewer actors (--actors) or add nodes"
            )
        names = [placement] if isinstance(placement, str) else list(placement)
        if names == ["spread"]:
            return
        for name in set(names):
            wanted = sum(1 for i in range(actors) if names[i % len(names)] == name)
            if have.get(name, 0.0) < wanted:
                raise ConfigError(
                    f"{wanted} actor(s) need the custom resource {name!r}, and the cluster "
                    f"offers {have.get(name, 0.0):g}; start nodes with "
                    f"`ray start --resources='{{\"{name}\": 1}}'` or use placement 'spread'"
                )

    def _new_actor(self, index: int) -> Any:
        where = self.placement[index % len(self.placement)]
        options: dict[str, Any] = dict(self._options)
        if where == "spread":
            options["scheduling_strategy"] = "SPREAD"
        else:
            options["resources"] = {where: 1}
        cls = self._ray.remote(SandboxActor)
        return cls.options(**options).remote(self._tasks_ref, **self._actor_kwargs)

    async def _ready(self, slots: Sequence[_Slot]) -> None:
        calls = [
            asyncio.wait_for(call_remote(s.handle.health.remote()), self.ready_timeout_s)
            for s in slots
        ]
        try:
            await asyncio.gather(*calls)
        except TimeoutError:
            raise ConfigError(
                f"the pool's {len(slots)} sandbox actor(s) did not start within "
                f"{self.ready_timeout_s:g} s: the cluster lacks room for them (see `ray status`: "
                f"each needs {self._options['num_cpus']} CPU"
                + ("" if self.placement == ["spread"] else f" and one of {self.placement}")
                + "); ask for fewer actors or add nodes"
            ) from None
        except self._ray.exceptions.RayActorError as e:
            raise SandboxError(
                f"a sandbox actor failed to start: {str(e).strip().splitlines()[-1][:300]}; "
                "run `referee doctor` on its node"
            ) from None

    def _mark_dead(self, slot: _Slot) -> None:
        slot.healthy = False
        if slot.probe is None or slot.probe.done():
            slot.probe = asyncio.ensure_future(self._recover(slot))

    async def _recover(self, slot: _Slot) -> None:
        """Wait for Ray to restart the actor; replace it when it does not come back."""
        try:
            await asyncio.wait_for(call_remote(slot.handle.health.remote()), self.ready_timeout_s)
        except Exception:
            self._ray.kill(slot.handle, no_restart=True)
            if slot not in self._slots:  # retired meanwhile: nothing to replace
                return
            slot.handle = self._new_actor(slot.index)
            slot.replaced += 1
            self._stats["replaced"] += 1
            try:
                await self._ready([slot])
            except Exception:
                return  # stays unhealthy; the next failure probes it again
        slot.healthy = True
        self._room.set()

    async def _pick(self, avoid: set[int]) -> _Slot | None:
        """The healthy actor with the fewest chunks in flight and room for one more
        (``per_actor``), preferring those not in ``avoid``; waits for room, and for a
        recovering actor when none is healthy (None after ``ready_timeout_s`` without one)."""
        alone_since: float | None = None
        while True:
            live = [s for s in self._slots if s.healthy and not s.starting]
            open_ = [s for s in live if s.in_flight < self.per_actor]
            fresh = [s for s in open_ if s.index not in avoid] or open_
            if fresh:
                turn = next(self._turn)
                n = max(s.index for s in self._slots) + 1
                return min(fresh, key=lambda s: (s.in_flight, (s.index - turn) % n))
            if live:
                alone_since = None
            else:
                alone_since = alone_since or time.monotonic()
                if time.monotonic() - alone_since > self.ready_timeout_s:
                    return None
            self._room.clear()
            try:  # woken when a chunk ends or an actor comes up; a look now and then anyway
                await asyncio.wait_for(self._room.wait(), 1.0 if live else 0.1)
            except TimeoutError:
                pass

    # ---- autoscaling -----------------------------------------------------------------------
    async def _autoscale(self) -> None:
        """Every ``scale_every_s``: grow when the queue is deep, retire an actor idle for
        ``idle_s`` (one per tick), within ``actors``..``max_actors``."""
        while not self._closed:
            await asyncio.sleep(self.scale_every_s)
            try:
                self._scale_once()
            except Exception:  # a failed look at the cluster must not stop the scaler
                continue

    def _scale_once(self) -> None:
        count = len(self._slots)
        want = min(self.max_actors, math.ceil(self.pending / self.scale_up_depth))
        if want > count and not any(s.starting for s in self._slots):
            ray: Any = self._ray
            free = ray.available_resources()
            cpus = float(self._options["num_cpus"])
            fit = int(free.get("CPU", 0.0) // cpus) if cpus > 0 else want - count
            add = min(want - count, fit)
            if add < want - count:
                self._stats["scale_up_blocked"] += 1
            for _ in range(add):
                index = next(self._indices)
                slot = _Slot(index, self._new_actor(index), healthy=False, starting=True)
                self._slots.append(slot)
                self._stats["scaled_up"] += 1
                self._keep(asyncio.ensure_future(self._bring_up(slot)))
            return
        if count <= self.min_actors or self.pending > 0:
            return
        now = time.monotonic()
        idle = [
            s
            for s in self._slots
            if s.healthy and not s.starting and s.in_flight == 0 and s.sessions == 0
            and now - s.idle_since >= self.idle_s
        ]  # fmt: skip
        if idle:
            slot = max(idle, key=lambda s: s.index)  # the newest goes first
            self._slots.remove(slot)
            self._stats["scaled_down"] += 1
            self._keep(asyncio.ensure_future(self._retire(slot)))

    def _keep(self, task: asyncio.Future[None]) -> None:
        """Hold a background task until it ends (the loop keeps only weak references)."""
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _bring_up(self, slot: _Slot) -> None:
        try:
            await self._ready([slot])
        except Exception:
            if slot in self._slots:
                self._slots.remove(slot)
            self._ray.kill(slot.handle, no_restart=True)
            return
        slot.starting = False
        slot.healthy = True
        slot.idle_since = time.monotonic()
        self._room.set()

    async def _retire(self, slot: _Slot) -> None:
        try:
            await asyncio.wait_for(call_remote(slot.handle.shutdown.remote()), 10.0)
        except Exception:
            pass
        self._ray.kill(slot.handle, no_restart=True)

    # ---- verification ----------------------------------------------------------------------
    async def _verify(
        self,
        samples: Sequence[tuple[str, str]],
        deadline_s: float | None,
        progress: Callable[[int], None] | None,
        within_s: float | None = None,
    ) -> list[Verdict]:
        # The absolute deadline is set now, at submission: queue time counts against it.
        submitted = time.time()
        expires_at = None if within_s is None else submitted + max(within_s, 0.0)
        samples = [(str(tid), str(c)) for tid, c in samples]
        unknown = sorted({tid for tid, _ in samples if tid not in self._task_ids})
        if unknown:
            raise UnknownTasks(
                unknown,
                f"unknown task id(s): {', '.join(map(repr, unknown[:10]))}; the pool holds "
                f"{len(self._task_ids)} tasks; give the pool the tasks you verify",
            )
        results: list[Verdict | None] = [None] * len(samples)
        live = max(1, sum(1 for s in self._slots if not s.starting))
        size = self.chunk_size or max(
            1, min(4 * (self.workers_per_actor or 4), math.ceil(len(samples) / (2 * live)))
        )
        self.pending += len(samples)
        self._stats["submitted"] += len(samples)
        deadline = _Deadline(submitted, expires_at)
        # At most as many chunks of this call wait for an actor as the largest pool could take
        # at once: the rest wait here, without a task each.
        window = asyncio.Semaphore(self.per_actor * self.max_actors)
        running: list[asyncio.Future[None]] = []
        try:
            for start in range(0, len(samples), size):
                await window.acquire()
                idx = list(range(start, min(start + size, len(samples))))
                job = asyncio.ensure_future(
                    self._chunk(idx, samples, deadline_s, results, progress, deadline)
                )
                job.add_done_callback(lambda _: window.release())
                running.append(job)
            await asyncio.gather(*running)
        finally:
            for pending in running:
                pending.cancel()
            # Samples never sent (the call was cancelled) leave the queue depth.
            self.pending -= sum(1 for v in results if v is None)
        out = [v for v in results if v is not None]
        if len(out) != len(samples):  # a bug here must not shift verdicts onto other samples
            raise SandboxError(f"the pool lost {len(samples) - len(out)} verdict(s); retry")
        return out

    def _settle(
        self,
        idx: Sequence[int],
        verdicts: Sequence[Verdict],
        results: list[Verdict | None],
        progress: Callable[[int], None] | None,
    ) -> None:
        """Record each sample's first verdict; a second one for the same sample is dropped."""
        fresh = 0
        for i, v in zip(idx, verdicts, strict=True):
            if results[i] is None:
                results[i] = v
                fresh += 1
            else:
                self._stats["duplicates_dropped"] += 1
        self.pending -= fresh
        self._stats["settled"] += fresh
        if progress is not None and fresh:
            progress(fresh)

    async def _chunk(
        self,
        idx: list[int],
        samples: Sequence[tuple[str, str]],
        deadline_s: float | None,
        results: list[Verdict | None],
        progress: Callable[[int], None] | None,
        deadline: _Deadline,
    ) -> None:
        chunk = [samples[i] for i in idx]
        avoid: set[int] = set()
        errors: list[str] = []
        per = min(deadline_s or self.deadline_cap_s, self.deadline_cap_s) + GRACE_S
        # Samples in a chunk wait for the actor's workers: the slowest chunk is all of them in
        # a row; past that (and a margin), the actor is taken for lost.
        bound = per * len(chunk) + 30.0
        settled = False
        for attempt in range(1 + self.max_retries):
            slot = await self._pick(avoid)
            if slot is None:
                errors.append("no live sandbox actor")
                break
            if deadline.passed():  # waited in the pool past its deadline: not sent
                self._stats["expired_in_queue"] += len(idx)
                self._settle(idx, [deadline.verdict(tid) for tid, _ in chunk], results, progress)
                return
            if attempt:
                self._stats["chunks_retried"] += 1
            slot.in_flight += 1
            ref = slot.handle.verify_batch.remote(chunk, deadline_s, deadline.expires_at)
            timeout = bound
            if deadline.expires_at is not None:
                timeout = min(bound, deadline.expires_at - time.time() + GRACE_S + 30.0)
            try:
                got: list[Verdict] = await asyncio.wait_for(call_remote(ref), timeout)
            except (self._ray.exceptions.RayActorError, TimeoutError) as e:
                if isinstance(e, TimeoutError):
                    self._ray.cancel(ref, force=True)
                errors.append(f"actor {slot.index}: {type(e).__name__}")
                avoid.add(slot.index)
                self._mark_dead(slot)
                continue
            finally:
                slot.in_flight -= 1
                if slot.in_flight == 0:
                    slot.idle_since = time.monotonic()
                self._room.set()
            self._settle(idx, got, results, progress)
            settled = True
            break
        if not settled:
            reason = (
                f"the sandbox actor died under the sample {len(errors)} time(s) "
                f"({'; '.join(errors)}); the sample was not judged"
            )
            lost = [Verdict.infra(tid, reason, VERIFIER) for tid, _ in chunk]
            self._settle(idx, lost, results, progress)

    def _submit(self, coro: Awaitable[T]) -> Future[T]:
        if self._closed:
            raise ConfigError("the sandbox pool is closed; make a new SandboxPool")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)  # type: ignore[arg-type]

    async def verify(
        self,
        samples: Sequence[tuple[str, str]],
        *,
        deadline_s: float | None = None,
        within_s: float | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Verdict]:
        """Verdicts on ``(task_id, completion)`` samples, in their order, one each.

        ``deadline_s`` bounds each sample's run from when a worker takes it; ``within_s`` is
        an absolute deadline from now, queue time included (killed or never started when it
        passes: an infrastructure verdict); ``progress`` hears the number of samples done
        after each chunk (from the pool's thread)."""
        work = self._verify(samples, deadline_s, progress, within_s)
        return await asyncio.wrap_future(self._submit(work))

    def verify_many(
        self,
        items: Iterable[tuple[Task, str]],
        *,
        deadline_s: float | None = None,
        within_s: float | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Verdict]:
        """Verdicts on ``(Task, completion)`` pairs, as :meth:`VerifierSet.verify_many` takes
        them (blocking; safe where an event loop is running); deadlines as in :meth:`verify`."""
        samples = [(task.id, completion) for task, completion in items]
        return self._submit(self._verify(samples, deadline_s, progress, within_s)).result()

    # ---- sessions --------------------------------------------------------------------------
    def open_session(
        self, env_name: str, task_id: str, options: Mapping[str, Any] | None = None
    ) -> PoolSession:
        """A new environment session on the actor holding the fewest sessions; all its calls go
        to that actor (its state lives there)."""

        async def open_() -> PoolSession:
            live = [s for s in self._slots if s.healthy] or self._slots
            turn, n = next(self._turn), len(self._slots)
            # Ties go round the actors, so sessions opened one after another (each closed
            # before the next opens) spread too; counted before the call, so concurrent
            # openings see each other.
            slot = min(live, key=lambda s: (s.sessions, s.in_flight, (s.index - turn) % n))
            slot.sessions += 1
            try:
                opened = await call_remote(
                    slot.handle.open_session.remote(env_name, task_id, options)
                )
            except BaseException:
                slot.sessions -= 1
                raise
            return PoolSession(slot.handle, opened, lambda: self._forget_session(slot))

        return self._submit(open_()).result()

    def _forget_session(self, slot: _Slot) -> None:
        self._loop.call_soon_threadsafe(lambda: setattr(slot, "sessions", slot.sessions - 1))

    # ---- lifecycle -------------------------------------------------------------------------
    def actors(self) -> list[Any]:
        """The actor handles, in order (for callers who pin work to one)."""
        return [s.handle for s in self._slots]

    def health(self, timeout_s: float = 10.0) -> list[dict[str, Any]]:
        """Each actor's :meth:`SandboxActor.health`, with the pool's view of it (``index``,
        ``healthy``, ``in_flight``, ``replaced``); ``error`` where it did not answer."""

        async def all_() -> list[dict[str, Any]]:
            async def one(slot: _Slot) -> dict[str, Any]:
                view = {
                    "index": slot.index,
                    "healthy": slot.healthy,
                    "starting": slot.starting,
                    "in_flight": slot.in_flight,
                    "replaced": slot.replaced,
                }
                try:
                    got = await asyncio.wait_for(
                        call_remote(slot.handle.health.remote()), timeout_s
                    )
                    return {**got, **view}
                except Exception as e:
                    return {**view, "error": f"{type(e).__name__}: {str(e)[:200]}"}

            return list(await asyncio.gather(*(one(s) for s in self._slots)))

        return self._submit(all_()).result()

    def stats(self) -> dict[str, int]:
        """What the pool did so far: samples ``submitted`` and ``settled``, ``pending`` (its
        queue depth), ``actors`` now, ``expired_in_queue`` (absolute deadline passed before the
        sample was sent), ``chunks_retried`` (after an actor died), ``duplicates_dropped``
        (late second verdicts), ``scaled_up``/``scaled_down``/``replaced`` actors,
        ``scale_up_blocked`` (the cluster had no room)."""

        async def read() -> dict[str, int]:
            return {**self._stats, "pending": self.pending, "actors": len(self._slots)}

        return self._submit(read()).result()

    def close(self) -> None:
        """Shut every actor down and stop the pool's thread. Safe to call twice."""
        if self._closed:
            return
        if getattr(self, "_scaler", None) is not None:
            self._scaler.cancel()  # type: ignore[union-attr]
        slots = getattr(self, "_slots", [])

        async def down() -> None:
            # Probes and actors on their way up or out end with the pool.
            for task in [
                *getattr(self, "_background", ()),
                *(s.probe for s in slots if s.probe is not None),
            ]:
                task.cancel()

            async def one(slot: _Slot) -> None:
                if slot.healthy:  # a dead or unplaced actor has nothing to shut down
                    try:
                        await asyncio.wait_for(call_remote(slot.handle.shutdown.remote()), 10.0)
                    except Exception:
                        pass
                self._ray.kill(slot.handle, no_restart=True)

            await asyncio.gather(*(one(s) for s in slots))

        try:
            self._submit(down()).result(timeout=30)
        except Exception:
            pass
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
