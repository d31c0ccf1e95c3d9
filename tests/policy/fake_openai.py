"""A fake OpenAI-compatible chat server on 127.0.0.1, for the policy and end-to-end tests.

Its behaviour is chosen by the request's ``model``:

* ``echo``: answers ``echo: <last user text>`` with logprobs, token ids and usage, as vLLM does;
* ``calc``: an agent for ``CalculatorEnv``: calls ``multiply`` with the two numbers of
  the user's ``AxB``, then answers with the tool's result;
* ``args-object``: a tool call whose arguments are an object, not JSON text;
* ``flaky``: HTTP 500 on the first request, then as ``echo``; ``ratelimit``: 429 then ``echo``;
* ``down``: always HTTP 503; ``bad-request``: HTTP 400; ``hang``: does not answer (until the
  server stops); ``empty``: no choices; ``not-json``: a 200 whose body is not JSON;
* ``code-agent``: an agent for ``CodeEnv``'s tools on a function task: turn 1 calls
  ``write_file(solution.py, ...)``, turn 2 calls ``run_python`` (the answer's ``probe``) and
  ``run_tests`` in one message, turn 3 calls ``submit``;
* ``code-single``: a single-turn answer, the solution in a ```python block;
* ``plan-agent``: an agent for any environment's tools: the plan of ``plans`` whose key occurs
  in a user message, one tool call a turn (``{"name": ..., "arguments": {...}}`` each), then a
  final answer without tool calls; with no plan, that answer at once.

The code the two ``code-*`` modes write comes from ``code_answers``: the first entry whose key
occurs in a user message of the request (a task's docstring, say) gives the whole
``solution.py``; with none, ``code-agent`` answers in prose and ``code-single`` with a block
that returns None (as it does for a seeded request whose seed is not in the answer's ``seeds``).

Every request body and its headers are kept in ``requests``.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class CodeAnswer:
    """What the ``code-*`` modes answer for one task: the whole ``solution.py``, and the
    program ``code-agent`` runs with ``run_python`` to try it."""

    solution: str
    probe: str = "import solution\nprint('imported', solution.__name__)"
    #: ``code-single`` only: the request seeds that get ``solution``; others get a block that
    #: returns None. None: every request; a request without a seed (greedy) always gets it.
    seeds: frozenset[int] | None = None


class FakeOpenAI:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.code_answers: dict[str, CodeAnswer] = {}
        self.plans: dict[str, list[dict[str, Any]]] = {}
        self.headers: list[dict[str, str]] = []
        self.counts: Counter[str] = Counter()
        self.release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append(dict(self.headers))
                    fake.counts[body.get("model", "")] += 1
                    n = fake.counts[body.get("model", "")]
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                status, payload, extra = fake.answer(body, n)
                self._send(status, payload, extra)

            def _send(
                self, status: int, payload: Any, headers: dict[str, str] | None = None
            ) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda *a: None  # type: ignore[method-assign]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.counts.clear()

    # ---- behaviours ---------------------------------------------------------------------------

    def answer(self, body: dict[str, Any], n: int) -> tuple[int, Any, dict[str, str]]:
        model = body.get("model")
        if model == "flaky" and n == 1:
            return 500, {"error": {"message": "CUDA out of memory"}}, {}
        if model == "ratelimit" and n == 1:
            return 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}
        if model == "down":
            return 503, {"error": {"message": "loading"}}, {}
        if model == "bad-request":
            return 400, {"error": {"message": "unknown field return_token_ids"}}, {}
        if model == "hang":
            self.release.wait(30)
            return 200, completion("too late", body), {}
        if model == "empty":
            return 200, {"id": "x", "choices": [], "usage": {}}, {}
        if model == "not-json":
            return 200, b"<html>a proxy page</html>", {}
        if model == "calc":
            return 200, calc(body), {}
        if model == "code-agent":
            return 200, code_agent(body, self._code_answer(body)), {}
        if model == "code-single":
            answer = self._code_answer(body)
            seed = body.get("seed")
            right = answer is not None and (
                answer.seeds is None or seed is None or seed in answer.seeds
            )
            code = answer.solution if answer is not None and right else "    return None\n"
            return 200, completion(f"Here is my solution:\n```python\n{code}```\n", body), {}
        if model == "plan-agent":
            return 200, plan_agent(body, self._plan(body)), {}
        if model == "args-object":
            call = {
                "id": "c1",
                "type": "function",
                "function": {"name": "multiply", "arguments": {"a": 2, "b": 3}},
            }
            return 200, completion(None, body, tool_calls=[call]), {}
        last_user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        return 200, completion(f"echo: {last_user}", body), {}

    def _plan(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        users = [str(m.get("content") or "") for m in body["messages"] if m["role"] == "user"]
        for key, plan in self.plans.items():
            if any(key in text for text in users):
                return plan
        return []

    def _code_answer(self, body: dict[str, Any]) -> CodeAnswer | None:
        users = [str(m.get("content") or "") for m in body["messages"] if m["role"] == "user"]
        for key, answer in self.code_answers.items():
            if any(key in text for text in users):
                return answer
        return None


def completion(
    content: str | None, body: dict[str, Any], tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A vLLM-shaped response: one 'token' per character of the text (or of the calls)."""
    text = content if content is not None else json.dumps(tool_calls)
    tokens = list(text)
    prompt_ids = list(range(1, 1 + sum(len(str(m.get("content") or "")) for m in body["messages"])))
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "tool_calls": tool_calls or []},
        "finish_reason": "tool_calls" if tool_calls else "stop",
        "stop_reason": None,
    }
    if body.get("logprobs"):
        choice["logprobs"] = {
            "content": [
                {"token": t, "logprob": -0.01 * (i + 1), "bytes": None, "top_logprobs": []}
                for i, t in enumerate(tokens)
            ]
        }
    if body.get("return_token_ids"):
        choice["token_ids"] = [ord(t) for t in tokens]
    response: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": len(tokens),
            "total_tokens": len(prompt_ids) + len(tokens),
        },
    }
    if body.get("return_token_ids"):
        response["prompt_token_ids"] = prompt_ids
    return response


def calc(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return completion(messages[-1]["content"], body)
    user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    a, b = re.search(r"(\d+)x(\d+)", user).groups()  # type: ignore[union-attr]
    call = {
        "id": f"call_{a}_{b}",
        "type": "function",
        "function": {"name": "multiply", "arguments": json.dumps({"a": int(a), "b": int(b)})},
    }
    return completion(None, body, tool_calls=[call])


def code_agent(body: dict[str, Any], answer: CodeAnswer | None) -> dict[str, Any]:
    """Write solution.py, try it (run_python and run_tests at once), submit: one step a turn."""
    if answer is None:
        return completion("I cannot solve this task.", body)
    turn = sum(m["role"] == "assistant" for m in body["messages"])

    def call(i: int, name: str, **args: Any) -> dict[str, Any]:
        fn = {"name": name, "arguments": json.dumps(args)}
        return {"id": f"call_{turn}_{i}", "type": "function", "function": fn}

    if turn == 0:
        calls = [call(0, "write_file", path="solution.py", content=answer.solution)]
    elif turn == 1:
        calls = [call(0, "run_python", code=answer.probe), call(1, "run_tests")]
    else:
        calls = [call(0, "submit")]
    return completion(None, body, tool_calls=calls)


def plan_agent(body: dict[str, Any], plan: list[dict[str, Any]]) -> dict[str, Any]:
    """The plan's next tool call (one a turn), then a final answer without one."""
    turn = sum(m["role"] == "assistant" for m in body["messages"])
    if turn >= len(plan):
        return completion("Done." if plan else "I cannot help with that.", body)
    step = plan[turn]
    fn = {"name": step["name"], "arguments": json.dumps(step.get("arguments") or {})}
    return completion(
        None, body, tool_calls=[{"id": f"call_{turn}", "type": "function", "function": fn}]
    )
