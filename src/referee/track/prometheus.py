"""A Prometheus ``/metrics`` endpoint for a run's step metrics and alerts.

Where a process serves (a trainer, the rollout service), :class:`MetricsServer` exposes the
latest value of every step metric as a gauge ``referee_<name>{run_id="..."}``, the alerts
as a counter ``referee_alerts_total{run_id, detector, severity}``, and what the steps cost as
counters summed over the steps: ``referee_sandbox_cpu_seconds_total{run_id}``,
``referee_sandbox_wall_seconds_total{run_id}``, ``referee_sandbox_runs_total{run_id}`` and
``referee_tokens_total{run_id, kind="prompt"|"completion"}``. It has a registry of its
own, so two servers in one process (or tests) never share or clash over metrics.

>>> with MetricsServer() as server:                                        # doctest: +SKIP
...     server.update({"reward_mean": 0.5, "flag_rate.exit-call": 0.0}, run_id="r1")
...     httpx.get(server.url).text                                         # doctest: +SKIP
'... referee_reward_mean{run_id="r1"} 0.5 ...'
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from referee.errors import ConfigError

__all__ = ["MetricsServer", "metric_name"]

PREFIX = "referee_"
#: Step metrics that are a step's share of a running total: counters, not gauges.
COUNTED = frozenset(
    {"sandbox_cpu_s", "sandbox_wall_s", "sandbox_runs", "prompt_tokens", "completion_tokens"}
)


def metric_name(name: str) -> str:
    """The Prometheus name of a step metric: ``flag_rate.exit-call`` is
    ``referee_flag_rate_exit_call`` (Prometheus allows only letters, digits and ``_``)."""
    return PREFIX + re.sub(r"[^a-zA-Z0-9_]", "_", name)


class MetricsServer:
    """Serves ``/metrics`` on ``host:port`` from a daemon thread until :meth:`close`.

    ``port=0`` picks a free port (see :attr:`port`). The default host is loopback: metrics
    of a training run are nobody else's business unless the user says so.
    """

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self.registry = CollectorRegistry()
        self._gauges: dict[str, Gauge] = {}
        self._lock = threading.Lock()
        self._alerts = Counter(
            PREFIX + "alerts",
            "Alerts raised by referee's reward-hacking detectors",
            ["run_id", "detector", "severity"],
            registry=self.registry,
        )
        self._cpu = Counter(
            PREFIX + "sandbox_cpu_seconds",
            "CPU seconds of the sandbox runs of the rollouts",
            ["run_id"],
            registry=self.registry,
        )
        self._sandbox_wall = Counter(
            PREFIX + "sandbox_wall_seconds",
            "Wall seconds of the sandbox runs of the rollouts",
            ["run_id"],
            registry=self.registry,
        )
        self._runs = Counter(
            PREFIX + "sandbox_runs",
            "Sandbox runs of the rollouts",
            ["run_id"],
            registry=self.registry,
        )
        self._tokens = Counter(
            PREFIX + "tokens",
            "Tokens of the rollouts, prompt and completion",
            ["run_id", "kind"],
            registry=self.registry,
        )
        try:
            self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as e:
            raise ConfigError(
                f"cannot serve metrics on {host}:{port}: {e.strerror or e}; pick another port "
                "(0 lets the system choose one)"
            ) from e
        self.host = host
        self.port: int = self._server.server_port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def update(self, metrics: Mapping[str, float], run_id: str) -> None:
        """Set the gauge of every metric in ``metrics`` for ``run_id``; a step's costs
        (:data:`COUNTED`) are added to the cost counters instead."""
        for name, value in metrics.items():
            if name not in COUNTED:
                self._gauge(name).labels(run_id=run_id).set(float(value))
        counted = (
            (self._cpu.labels(run_id=run_id), "sandbox_cpu_s"),
            (self._sandbox_wall.labels(run_id=run_id), "sandbox_wall_s"),
            (self._runs.labels(run_id=run_id), "sandbox_runs"),
            (self._tokens.labels(run_id=run_id, kind="prompt"), "prompt_tokens"),
            (self._tokens.labels(run_id=run_id, kind="completion"), "completion_tokens"),
        )
        for counter, name in counted:
            value = float(metrics.get(name, 0.0))
            if value > 0:
                counter.inc(value)

    def alert(self, detector: str, severity: str, run_id: str) -> None:
        """Count one alert."""
        self._alerts.labels(run_id=run_id, detector=detector, severity=severity).inc()

    def _gauge(self, name: str) -> Gauge:
        full = metric_name(name)
        with self._lock:
            gauge = self._gauges.get(full)
            if gauge is None:
                gauge = Gauge(
                    full, f"referee step metric {name}", ["run_id"], registry=self.registry
                )
                self._gauges[full] = gauge
            return gauge

    def close(self) -> None:
        """Stop serving and free the port. Safe to call twice."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
