"""Faults under `referee serve`, measured: a sandbox worker killed mid-batch, a candidate that
hangs past its deadline, and SIGTERM with work in flight.

    .venv/bin/python bench/service_faults.py [--runs 5]

Each on a fresh `referee serve` subprocess (2 workers) with the 164 HumanEval tasks:

* **worker killed**: a batch of 16 slow samples (8 right answers, 8 wrong ones, each sleeping
  0.3 s before it is judged); once a fork server is running a sample, it (the in-sandbox
  server; every other run: its outer bubblewrap process) is SIGKILLed from outside. Counted:
  verdicts returned, right answers passed, wrong ones failed, infrastructure errors, the
  batch's time against the same batch without a kill, ``worker_lost`` in the metrics, and
  whether the next batch (16 canonical solutions) is all correct.
* **hung candidate**: one request of 2 samples that never return (``deadline_s`` 1.0) holds
  both workers; 50 ms later a second request of 2 canonical solutions needs them. The time from
  the first request's start until the second's answer, minus the second's own time measured
  alone, is when the workers were free again.
* **SIGTERM drain**: a request of 2 hanging samples (``deadline_s`` 3) is in flight when the
  server gets SIGTERM; then ``/health`` and a new verify request are sent. Measured: their
  statuses, the in-flight request's status, the time from SIGTERM to exit and the exit status.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from _service import descendants, humaneval_file, serve

HANG = "    while True:\n        pass\n"
SLOW = "import time as _t\n_t.sleep(0.3)\n"


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def fork_servers(server_pid: int) -> list[tuple[int, int]]:
    """(outer bwrap pid, in-sandbox fork server pid) of each worker of the server."""
    out = []
    for bw in descendants(server_pid):
        try:
            if parent_of(bw) != server_pid:
                continue
            for init in descendants(bw):
                if parent_of(init) == bw:
                    for srv in descendants(init):
                        if parent_of(srv) == init:
                            out.append((bw, srv))
        except OSError:
            continue
    return out


def post(url: str, body: dict[str, Any]) -> tuple[httpx.Response, float]:
    t = time.perf_counter()
    r = httpx.post(url + "/v1/verify", json=body, timeout=60)
    return r, time.perf_counter() - t


def worker_killed(path: Path, gold: list[dict[str, str]], run: int) -> dict[str, Any]:
    right = [{"task_id": g["task_id"], "completion": g["completion"] + SLOW} for g in gold[:8]]
    wrong = [
        {"task_id": g["task_id"], "completion": "    return None\n" + SLOW} for g in gold[8:16]
    ]
    samples = [s for pair in zip(right, wrong, strict=True) for s in pair]
    target = "bwrap (outer)" if run % 2 else "fork server (in the sandbox)"
    with serve(["--tasks", str(path), "--workers", "2"]) as srv:
        post(srv.url, {"samples": gold[:16]})  # both workers started
        _, alone_s = post(srv.url, {"samples": samples})
        reply: dict[str, Any] = {}
        t = threading.Thread(target=lambda: reply.update(r=post(srv.url, {"samples": samples})))
        t.start()
        bwrap, server = fork_servers(srv.pid)[0]
        until = time.monotonic() + 10
        while not descendants(server) and time.monotonic() < until:
            time.sleep(0.005)
        os.kill(bwrap if run % 2 else server, signal.SIGKILL)
        t.join()
        r, killed_s = reply["r"]
        verdicts = r.json()["verdicts"]
        after, _ = post(srv.url, {"samples": gold[:16]})
        metrics = httpx.get(srv.url + "/metrics").text
    lost = [
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith('referee_infra_errors_total{where="worker_lost"}')
    ]
    is_right = [s in right for s in samples]
    return {
        "killed": target,
        "status": r.status_code,
        "verdicts": len(verdicts),
        "right_passed": sum(v["passed"] for v, ok in zip(verdicts, is_right, strict=True) if ok),
        "wrong_passed": sum(
            v["passed"] for v, ok in zip(verdicts, is_right, strict=True) if not ok
        ),
        "infra_errors": sum(v["infra_error"] is not None for v in verdicts),
        "batch_s": killed_s,
        "batch_without_kill_s": alone_s,
        "worker_lost_metric": lost[0] if lost else 0.0,
        "next_batch_all_passed": all(v["passed"] for v in after.json()["verdicts"]),
    }


def hung_candidate(path: Path, gold: list[dict[str, str]], deadline_s: float) -> dict[str, Any]:
    hang = {
        "samples": [{"task_id": gold[0]["task_id"], "completion": HANG}] * 2,
        "deadline_s": deadline_s,
    }
    quick = {"samples": gold[:2]}
    with serve(["--tasks", str(path), "--workers", "2"]) as srv:
        post(srv.url, {"samples": gold[:16]})
        alone = statistics.median(post(srv.url, quick)[1] for _ in range(5))
        reply: dict[str, Any] = {}
        t0 = time.perf_counter()
        t = threading.Thread(target=lambda: reply.update(r=post(srv.url, hang)))
        t.start()
        time.sleep(0.05)
        r2, _ = post(srv.url, quick)
        second_done = time.perf_counter() - t0
        t.join()
        r1, first_s = reply["r"]
    return {
        "deadline_s": deadline_s,
        "hung_request_s": first_s,
        "hung_verdicts": [v["infra_error"] for v in r1.json()["verdicts"]],
        "second_request_done_s": second_done,
        "second_request_alone_s": alone,
        "workers_free_after_s": second_done - alone,
        "second_all_passed": all(v["passed"] for v in r2.json()["verdicts"]),
    }


def drain(path: Path, gold: list[dict[str, str]]) -> dict[str, Any]:
    hang = {
        "samples": [{"task_id": gold[0]["task_id"], "completion": HANG}] * 2,
        "deadline_s": 3.0,
    }
    with serve(["--tasks", str(path), "--workers", "2"]) as srv:
        reply: dict[str, Any] = {}
        t = threading.Thread(target=lambda: reply.update(r=post(srv.url, hang)))
        t.start()
        while httpx.get(srv.url + "/health").json()["queue"]["in_use"] < 2:
            time.sleep(0.01)
        srv.proc.send_signal(signal.SIGTERM)
        signalled = time.perf_counter()
        time.sleep(0.2)
        health = httpx.get(srv.url + "/health")
        new = httpx.post(srv.url + "/v1/verify", json={"samples": gold[:1]})
        t.join()
        rc = srv.proc.wait(timeout=60)
        exited_s = time.perf_counter() - signalled
        r, in_flight_s = reply["r"]
        try:
            httpx.get(srv.url + "/health", timeout=2)
            after_exit = "answered"
        except httpx.ConnectError:
            after_exit = "connection refused"
    return {
        "health_during_drain": f"{health.status_code} {health.json()['status']}",
        "new_request_during_drain": f"{new.status_code} {new.json().get('error')} "
        f"Retry-After={new.headers.get('retry-after')}",
        "in_flight_status": r.status_code,
        "in_flight_verdicts": [v["infra_error"] for v in r.json()["verdicts"]],
        "in_flight_s": in_flight_s,
        "sigterm_to_exit_s": exited_s,
        "exit_status": rc,
        "after_exit": after_exit,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    path, _, gold = humaneval_file()
    result: dict[str, Any] = {
        "machine": machine(),
        "command": "python bench/service_faults.py " + " ".join(sys.argv[1:]),
        "worker_killed": [],
        "hung_candidate": [],
        "drain": [],
    }
    for i in range(args.runs):
        w = worker_killed(path, gold, i)
        h = hung_candidate(path, gold, 1.0)
        d = drain(path, gold)
        result["worker_killed"].append(w)
        result["hung_candidate"].append(h)
        result["drain"].append(d)
        print(f"run {i + 1}:\n  worker killed: {w}\n  hung: {h}\n  drain: {d}", flush=True)
    free = [h["workers_free_after_s"] for h in result["hung_candidate"]]
    exits = [d["sigterm_to_exit_s"] for d in result["drain"]]
    result["summary"] = {
        "workers_free_after_s": {"median": statistics.median(free), "max": max(free)},
        "sigterm_to_exit_s": {"median": statistics.median(exits), "max": max(exits)},
    }
    print(result["summary"])
    print(f"saved {save('service_faults', result)}")


if __name__ == "__main__":
    main()
