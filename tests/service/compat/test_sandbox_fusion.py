"""``POST /run_code`` (``--compat sandbox-fusion``) driven by the real clients: the
``sandbox-fusion`` package (sync and async) and veRL's SandboxFusion reward (loaded by path, see
tests/service/contract_probes/verl_probe.py), against a real server and sandbox."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.compat.serving import assert_json_error, require_clients, served

require_clients("sandbox_fusion", "verl")

from sandbox_fusion import RunCodeRequest, run_code, run_code_async  # noqa: E402

from tests.service.contract_probes import verl_probe  # noqa: E402

COMPAT = ("sandbox-fusion",)
ADD_CODE = "a, b = map(int, input().split())\nprint(a + b)\n"
ADD = f"```python\n{ADD_CODE}```"
CASES = {"inputs": ["1 2\n", "10 -3\n", "0 0\n"], "outputs": ["3\n", "7\n", "0\n"]}


@pytest.fixture(scope="module")
def sf(he_file: Path) -> Any:
    with served(he_file, compat=COMPAT, deadline_cap_s=20) as (url, service):
        yield url, service


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_the_sandbox_fusion_client_runs_python_and_bash(sf: Any) -> None:
    url, _ = sf
    r = run_code(RunCodeRequest(code="print(input()[::-1])", language="python", stdin="abc\n"), url)
    assert r.status == "Success" and r.message == "" and r.compile_result is None
    assert r.run_result.status == "Finished" and r.run_result.return_code == 0
    assert r.run_result.stdout == "cba\n" and r.run_result.execution_time is not None

    files = {"data/in.txt": b64("41"), "skipped.txt": None}
    code = (
        "import os\nn = int(open('data/in.txt').read()) + 1\n"
        "open('out.txt', 'w').write(str(n))\nprint(os.path.exists('skipped.txt'))"
    )
    request = RunCodeRequest(
        code=code, language="python", files=files, fetch_files=["out.txt", "missing.txt"]
    )
    r = run_code(request, url)
    assert r.status == "Success" and r.run_result.stdout == "False\n"
    assert r.files == {"out.txt": b64("42")}  # a file that is not there is left out

    r = run_code(RunCodeRequest(code="echo $((6 * 7)); exit 3", language="bash"), url)
    assert r.status == "Failed"
    assert r.run_result.status == "Finished" and r.run_result.return_code == 3
    assert r.run_result.stdout == "42\n"


def test_errors_timeouts_and_memory_are_run_results_not_sandbox_errors(sf: Any) -> None:
    url, _ = sf
    r = run_code(RunCodeRequest(code="raise ValueError('boom')", language="python"), url)
    assert r.status == "Failed" and r.run_result.status == "Finished"
    assert r.run_result.return_code == 1 and "ValueError: boom" in r.run_result.stderr

    started = time.monotonic()
    r = run_code(
        RunCodeRequest(
            code="print('x', flush=True)\nwhile True: pass", language="python", run_timeout=0.5
        ),
        url,
    )
    assert time.monotonic() - started < 3
    assert r.status == "Failed" and r.run_result.status == "TimeLimitExceeded"
    assert r.run_result.return_code is None and r.run_result.stdout == "x\n"

    # veRL's memory_limit_MB (not in the client's model) is honoured.
    hog = {"code": "x = b'x' * (300 * 1024 * 1024)\nprint('survived')", "language": "python"}
    big = httpx.post(url + "/run_code", json={**hog, "memory_limit_MB": 1024}, timeout=30).json()
    small = httpx.post(url + "/run_code", json={**hog, "memory_limit_MB": 64}, timeout=30).json()
    assert big["status"] == "Success" and big["run_result"]["stdout"] == "survived\n"
    assert small["status"] == "Failed" and small["run_result"]["return_code"] != 0
    assert "survived" not in small["run_result"]["stdout"]


def test_an_unsupported_language_is_a_final_failed_reply_not_retried(sf: Any) -> None:
    url, _ = sf
    assert httpx.get(url + "/v1").json()["compat"] == {"sandbox-fusion": ["POST /run_code"]}
    started = time.monotonic()
    r = run_code(RunCodeRequest(code="int main(){}", language="cpp"), url, max_attempts=5)
    # The client retries anything it sees as an error after >= 1 s: a final reply is at once.
    assert time.monotonic() - started < 1.0
    assert r.status == "Failed" and r.run_result is None and r.compile_result is None
    assert "'cpp' is not supported" in r.message and "python" in r.message
    results, meta = verl_probe.load().check_correctness(
        url + "/run_code", {"inputs": ["1"], "outputs": ["1"]}, "int main(){}", language="cpp"
    )
    assert results == [-1] and meta[0]["api_request_error"] is None  # a reply, not an HTTP error


def test_the_async_client(sf: Any) -> None:
    url, _ = sf

    async def many() -> list[Any]:
        requests = [
            RunCodeRequest(code=f"print({i} * 2)", language="python", run_timeout=5)
            for i in range(4)
        ]
        return await asyncio.gather(*(run_code_async(r, url) for r in requests))

    replies = asyncio.run(many())
    assert [r.run_result.stdout for r in replies] == [f"{i * 2}\n" for i in range(4)]
    assert all(r.status == "Success" for r in replies)


def test_verl_scores_right_wrong_and_crashing_solutions(sf: Any) -> None:
    url, _ = sf
    run_code_url = url + "/run_code"
    assert verl_probe.compute_score(run_code_url, ADD, CASES)[0] == 1.0
    wrong = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
    score, meta = verl_probe.compute_score(run_code_url, wrong, CASES)
    assert score == pytest.approx(1 / 3)  # "0 0" still passes
    assert [m["status"] for m in meta] == ["wrong_answer", "wrong_answer", "success"]
    crash = "```python\nraise SystemExit(2)\n```"
    results, _ = verl_probe.check_correctness(run_code_url, CASES, "raise SystemExit(2)")
    assert results == [-2, -2, -2]
    assert verl_probe.compute_score(run_code_url, crash, CASES)[0] == 0.0
    # fn_name: veRL's harness calls the function with JSON arguments read from stdin.
    fn_cases = {"fn_name": "add", "inputs": ["1\n2", "5\n5"], "outputs": ["3", "10"]}
    good_fn = "```python\ndef add(a, b):\n    return a + b\n```"
    assert verl_probe.compute_score(run_code_url, good_fn, fn_cases)[0] == 1.0


def test_a_hanging_solution_times_out_and_frees_its_worker(sf: Any) -> None:
    url, _ = sf
    hang = "while True:\n    pass"
    started = time.monotonic()
    results, meta = verl_probe.check_correctness(
        url + "/run_code", {"inputs": ["", ""], "outputs": ["", ""]}, hang, timeout=1
    )
    took = time.monotonic() - started
    assert results == [-3, -3] and meta[0]["status"] == "timeout"
    assert took < 1 + 2.0, took
    # Both workers are free again: two runs at once come straight back.
    started = time.monotonic()
    assert verl_probe.check_correctness(url + "/run_code", CASES, ADD_CODE)[0] == [True] * 3
    assert time.monotonic() - started < 2.0


def test_many_concurrent_verl_cases_at_a_small_queue_all_get_real_results(he_file: Path) -> None:
    """veRL scores a 429 as a failed case (-1): past the queue limit the route must wait."""
    slow_add = "import time\ntime.sleep(0.3)\na, b = map(int, input().split())\nprint(a + b)"
    cases = {
        "inputs": [f"{i} {i}\n" for i in range(8)],
        "outputs": [f"{2 * i}\n" for i in range(8)],
    }
    with served(he_file, compat=COMPAT, queue=2) as (url, service):
        peak = 0
        stop = threading.Event()

        def watch() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, service.admission.waiting)
                time.sleep(0.01)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            results, meta = verl_probe.check_correctness(url + "/run_code", cases, slow_add)
        finally:
            stop.set()
            watcher.join()
    assert results == [True] * 8, [m["status"] for m in meta]
    assert peak >= 1  # some of them did wait for room


def test_a_wait_for_room_that_times_out_is_a_504_both_clients_retry(he_file: Path) -> None:
    with served(he_file, compat=COMPAT, queue=1, deadline_cap_s=1.0) as (url, service):
        with service.admission.admit(1):  # the whole limit is held elsewhere
            started = time.monotonic()
            r = httpx.post(url + "/run_code", json={"code": "1", "language": "python"})
            took = time.monotonic() - started
        body = assert_json_error(r, 504)
        assert body["error"] == "queue_timeout" and "--queue" in body["message"]
        assert 1.0 <= took < 2.0, took  # waited min(--deadline, compile_timeout + 5 s)
        ok = httpx.post(url + "/run_code", json={"code": "print(1)", "language": "python"})
        assert ok.status_code == 200 and ok.json()["status"] == "Success"


def test_hostile_bodies_get_4xx_json_never_a_500(he_file: Path) -> None:
    good = {"code": "print(1)", "language": "python"}
    bad: list[tuple[dict[str, Any], int]] = [
        ({"content": b"{" * 10_000}, 422),
        ({"content": b'{"code": '}, 422),
        ({"content": b"[1, 2]"}, 422),
        ({"json": {"language": "python"}}, 422),
        ({"json": {**good, "code": 12}}, 422),
        ({"json": {**good, "language": ["python"]}}, 422),
        ({"json": {**good, "run_timeout": -1}}, 422),
        ({"json": {**good, "run_timeout": "soon"}}, 422),
        ({"json": {**good, "compile_timeout": 1e308}}, 422),
        ({"json": {**good, "stdin": 5}}, 422),
        ({"json": {**good, "files": {"../../etc/passwd": b64("x")}}}, 422),
        ({"json": {**good, "files": {"/etc/passwd": b64("x")}}}, 422),
        ({"json": {**good, "files": {"a/../../b": b64("x")}}}, 422),
        ({"json": {**good, "files": {"a\x00b": b64("x")}}}, 422),
        ({"json": {**good, "files": {"x.txt": "not base64!"}}}, 422),
        ({"json": {**good, "files": ["x.txt"]}}, 422),
        ({"json": {**good, "files": {"a": b64("x"), "a/b": b64("y")}}}, 422),
        ({"json": {**good, "files": {f"f{i}": None for i in range(300)}}}, 422),
        ({"json": {**good, "fetch_files": ["../../../etc/shadow"]}}, 422),
        ({"json": {**good, "fetch_files": "out.txt"}}, 422),
        ({"json": {**good, "memory_limit_MB": "lots"}}, 422),
        ({"content": b"x" * (2 * 1024 * 1024)}, 413),
    ]
    with (
        served(he_file, compat=COMPAT, max_body_mb=1) as (url, _),
        httpx.Client(base_url=url, timeout=30) as c,
    ):
        for kw, status in bad:
            r = c.post("/run_code", headers={"content-type": "application/json"}, **kw)
            assert_json_error(r, status)
        # Extra keys the clients send (veRL's memory_limit_MB, pytest's args) are fine.
        extra = {**good, "memory_limit_MB": 1024, "args": [], "compile_timeout": 10}
        assert c.post("/run_code", json=extra).json()["status"] == "Success"
