"""The Prometheus endpoint, scraped over loopback."""

from __future__ import annotations

import socket

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from referee.errors import ConfigError
from referee.track.prometheus import MetricsServer, metric_name


def scrape(server: MetricsServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(server.url, timeout=5).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metric_names_are_prefixed_and_legal():
    assert metric_name("reward_mean") == "referee_reward_mean"
    assert metric_name("flag_rate.exit-call") == "referee_flag_rate_exit_call"


def test_updates_show_up_in_a_scrape_per_run():
    with MetricsServer() as server:
        assert server.port > 0 and server.url.endswith("/metrics")
        server.update({"reward_mean": 0.5, "flag_rate.exit-call": 0.125}, run_id="r1")
        server.update({"reward_mean": 0.25}, run_id="r2")
        server.update({"reward_mean": 0.75}, run_id="r1")  # the latest value wins
        server.alert("canary-pass", "critical", run_id="r1")
        server.alert("canary-pass", "critical", run_id="r1")
        got = scrape(server)
    assert got[("referee_reward_mean", (("run_id", "r1"),))] == 0.75
    assert got[("referee_reward_mean", (("run_id", "r2"),))] == 0.25
    assert got[("referee_flag_rate_exit_call", (("run_id", "r1"),))] == 0.125
    key = ("referee_alerts_total",
           (("detector", "canary-pass"), ("run_id", "r1"), ("severity", "critical")))  # fmt: skip
    assert got[key] == 2.0


def test_two_servers_keep_their_metrics_apart_and_close_frees_the_port():
    a, b = MetricsServer(), MetricsServer()
    try:
        a.update({"pass_rate": 1.0}, run_id="x")
        assert ("referee_pass_rate", (("run_id", "x"),)) in scrape(a)
        assert ("referee_pass_rate", (("run_id", "x"),)) not in scrape(b)
    finally:
        a.close()
        b.close()
        a.close()  # twice is fine
    with pytest.raises(httpx.TransportError):
        httpx.get(a.url, timeout=2)


def test_a_port_in_use_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(ConfigError, match="pick another port"):
            MetricsServer(port=s.getsockname()[1])


def test_step_costs_add_up_in_counters():
    from referee.rollout import Cost, Trajectory
    from referee.track.tracker import Tracker

    with MetricsServer() as server:
        tracker = Tracker(sinks=[server], run_id="r1")
        cost = Cost(sandbox_cpu_s=1.25, sandbox_wall_s=2.0, sandbox_runs=3, prompt_tokens=10,
                    completion_tokens=4)  # fmt: skip
        for step in range(2):
            ts = [Trajectory(task_id="t", policy="p", env="e", cost=cost) for _ in range(2)]
            tracker.log(ts, step)
        got = scrape(server)
    r1 = (("run_id", "r1"),)
    assert got[("referee_sandbox_cpu_seconds_total", r1)] == 5.0
    assert got[("referee_sandbox_wall_seconds_total", r1)] == 8.0
    assert got[("referee_sandbox_runs_total", r1)] == 12.0
    assert got[("referee_tokens_total", (("kind", "prompt"), ("run_id", "r1")))] == 40.0
    assert got[("referee_tokens_total", (("kind", "completion"), ("run_id", "r1")))] == 16.0
    assert ("referee_sandbox_cpu_s", r1) not in got  # counted, not a gauge as well
