"""The server's Prometheus metrics, on a registry of its own (two servers in one process, or
tests, never share counters).

Served at ``GET /metrics``: requests by route and status, request latency by route, admitted
work in flight and the admission limit, verdicts by outcome, infrastructure errors, deadlines
that killed work, sandbox workers busy and idle, and sessions open.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from referee.verify.verdict import Verdict

__all__ = ["ServiceMetrics", "verdict_outcome"]

#: Seconds; verification requests span milliseconds (one function task) to minutes.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


def verdict_outcome(v: Verdict) -> str:
    """One word per verdict for the ``outcome`` label: passed, failed, infra_error, flagged."""
    if v.infra_error is not None:
        return "infra_error"
    if v.flags:
        return "flagged"
    return "passed" if v.passed else "failed"


class ServiceMetrics:
    def __init__(self, *, workers: int, queue_limit: int) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter(
            "referee_http_requests",
            "HTTP requests by route and status",
            ["route", "status"],
            registry=r,
        )
        self.latency = Histogram(
            "referee_http_request_seconds",
            "Request latency by route",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.queue_depth = Gauge(
            "referee_queue_depth", "Admitted work units running or waiting", registry=r
        )
        self.queue_limit = Gauge("referee_queue_limit", "Admission limit (--queue)", registry=r)
        self.queue_limit.set(queue_limit)
        self.rejected = Counter(
            "referee_rejected",
            "Requests refused by admission (429) or draining (503)",
            ["reason"],
            registry=r,
        )
        self.verdicts = Counter("referee_verdicts", "Verdicts by outcome", ["outcome"], registry=r)
        self.infra_errors = Counter(
            "referee_infra_errors",
            "Infrastructure errors by where they happened",
            ["where"],
            registry=r,
        )
        self.deadlines = Counter(
            "referee_deadline_exceeded",
            "Work killed because its request's deadline passed",
            ["route"],
            registry=r,
        )
        self.workers_busy = Gauge(
            "referee_sandbox_workers_busy", "Sandbox workers running a job", registry=r
        )
        self.workers_idle = Gauge(
            "referee_sandbox_workers_idle", "Sandbox workers waiting for a job", registry=r
        )
        self.workers_idle.set(workers)
        self.workers = workers
        self.sessions_open = Gauge("referee_sessions_open", "Environment sessions open", registry=r)
        self.sessions_expired = Counter(
            "referee_sessions_expired", "Sessions closed for being idle too long", registry=r
        )

    def busy(self, n: int) -> None:
        self.workers_busy.set(n)
        self.workers_idle.set(max(0, self.workers - n))

    def lost_worker(self) -> None:
        """A sandbox worker died under a sample (judged again; an infra error the second time)."""
        self.infra_errors.labels("worker_lost").inc()

    def count_verdicts(self, verdicts: list[Verdict]) -> None:
        for v in verdicts:
            self.verdicts.labels(verdict_outcome(v)).inc()
            if v.infra_error is not None:
                self.infra_errors.labels("verify").inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
