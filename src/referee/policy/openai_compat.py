"""``OpenAIPolicy``: any server that speaks OpenAI's ``/v1/chat/completions`` (vLLM, SGLang...).

One request per turn, not streamed. What the server sends back is kept for training: the
assistant message with its tool calls, per-token log-probabilities (``logprobs: true``, read from
``choices[0].logprobs.content[*].logprob``), token ids where the server returns them (vLLM with
``return_token_ids: true``: ``prompt_token_ids`` on the response, ``token_ids`` on the choice),
usage counts, the finish reason and the latency::

    policy = OpenAIPolicy("http://localhost:8000/v1", "Qwen/Qwen2.5-0.5B-Instruct")
    g = await policy.generate([{"role": "user", "content": "2+2?"}], sampling=Sampling(0.0))
    g.message["content"], g.token_ids, g.logprobs, g.finish_reason

Failures are :class:`~referee.errors.PolicyError` with the URL and what to check. Rate limits
(429), server errors (5xx) and dropped connections are retried a bounded number of times with
exponential backoff (a ``Retry-After`` header is honoured up to :attr:`max_backoff_s`); a timeout
is not retried here (the rollout runner retries the whole episode instead), and neither is a
client error (4xx: the request itself is wrong). A response without choices is a
:class:`~referee.policy.base.PolicyOutputError` (recorded as a model error).

Servers that reject fields they do not know (OpenAI's own API) need ``return_token_ids=False``.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import Any

import httpx

from referee.errors import PolicyError
from referee.policy.base import Generation, PolicyOutputError, Sampling

__all__ = ["OpenAIPolicy"]

#: Status codes worth asking again: rate limited, or the server had a (possibly passing) fault.
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class OpenAIPolicy:
    """A chat model behind an OpenAI-compatible HTTP endpoint.

    Args:
        base_url: the API root, usually ending in ``/v1`` (``http://host:8000/v1``).
        model: the served model's name (vLLM: ``--served-model-name``, else the path or hub id).
        api_key: sent as a bearer token; local servers usually need none.
        name: recorded on trajectories (default ``openai:<model>``).
        max_retries: extra attempts after a 429, a 5xx or a connection error.
        backoff_s: first wait between attempts, doubled each time.
        logprobs: ask for per-token log-probabilities.
        return_token_ids: ask for token ids (a vLLM extension; others ignore or reject it).
        tool_choice: sent when tools are given (``"auto"``, ``"required"``...); the server's
            default otherwise (vLLM needs ``--enable-auto-tool-choice`` for ``"auto"``).
        extra_body: more fields for every request (``{"top_k": 20}``, ``chat_template_kwargs``).
        transport: an ``httpx`` transport, for tests and custom networking.

    The client is opened on first use in the running event loop (and again if a later call runs
    in another loop, as successive ``asyncio.run`` calls do); :meth:`aclose` releases it. Use
    one policy from one event loop at a time.
    """

    max_backoff_s = 30.0

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        name: str | None = None,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        logprobs: bool = True,
        return_token_ids: bool = True,
        tool_choice: str | None = None,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        max_connections: int = 256,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise PolicyError(
                f"base_url {base_url!r} is not an http(s) URL; "
                "pass the API root, for example http://localhost:8000/v1"
            )
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.model = model
        self.name = name or f"openai:{model}"
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.logprobs = logprobs
        self.return_token_ids = return_token_ids
        self.tool_choice = tool_choice
        self.extra_body = dict(extra_body or {})
        self._headers = dict(headers or {})
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # ---- the request ------------------------------------------------------------------------

    def request_body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        sampling: Sampling,
    ) -> dict[str, Any]:
        """The JSON body sent for one turn (public so that callers can log or inspect it)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
            "n": 1,
            "stream": False,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        if tools:
            body["tools"] = tools
            if self.tool_choice is not None:
                body["tool_choice"] = self.tool_choice
        if self.logprobs:
            body["logprobs"] = True
        if self.return_token_ids:
            body["return_token_ids"] = True
        body.update(self.extra_body)
        return body

    async def generate(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        sampling: Sampling = Sampling(),
    ) -> Generation:
        body = self.request_body(messages, tools, sampling)
        start = time.perf_counter()
        data, attempts = await self._post(body, sampling.timeout_s)
        generation = parse_response(data, url=self.url)
        generation.extra["attempts"] = attempts
        return replace(generation, latency_s=time.perf_counter() - start)

    async def _post(self, body: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], int]:
        client = self._client_for_loop()
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            try:
                # httpx's timeout bounds each phase (connect, each read); this bounds the whole
                # request, so a server trickling bytes cannot hold a rollout forever.
                async with asyncio.timeout(timeout_s):
                    response = await client.post(
                        self.url, json=body, timeout=httpx.Timeout(timeout_s)
                    )
            except (TimeoutError, httpx.TimeoutException) as e:
                raise PolicyError(
                    f"POST {self.url} timed out after {timeout_s:g}s (model {self.model!r}); "
                    "the server is overloaded or stuck: check it, lower the rollout "
                    "concurrency, or raise Sampling.timeout_s"
                ) from e
            except (httpx.TransportError, OSError) as e:
                # Connection refused or dropped: the server may be starting or restarting.
                failure = (
                    f"could not reach {self.url} ({type(e).__name__}: {e}); is the server "
                    "running and is base_url right (the API root, ending in /v1)? For example "
                    "`vllm serve MODEL --port 8000` and http://localhost:8000/v1"
                )
            except httpx.HTTPError as e:
                raise PolicyError(f"POST {self.url} failed: {type(e).__name__}: {e}") from e
            else:
                if response.status_code == 200:
                    return self._json(response), attempt
                failure = _status_message(response, self.url, self.model)
                if response.status_code not in _RETRY_STATUS:
                    raise PolicyError(failure)
                retry_after = _retry_after(response)
            if attempt > self.max_retries:
                raise PolicyError(f"{failure} (gave up after {attempt} attempts)")
            wait = self.backoff_s * 2 ** (attempt - 1)
            if retry_after is not None:
                wait = max(wait, retry_after)
            await asyncio.sleep(min(wait, self.max_backoff_s))

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError as e:
            raise PolicyError(
                f"{self.url} answered 200 with a body that is not JSON ({response.text[:200]!r}); "
                "is base_url an OpenAI-compatible API root?"
            ) from e
        if not isinstance(data, dict):
            raise PolicyError(f"{self.url} answered with JSON that is not an object: {data!r:.200}")
        return data

    # ---- the client's lifetime ----------------------------------------------------------------

    def _client_for_loop(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # A client's connections belong to the loop that opened them; one from a finished
            # loop cannot even be closed from here, so it is dropped.
            self._client = httpx.AsyncClient(
                headers=self._headers, limits=self._limits, transport=self._transport
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client (when it belongs to the running loop)."""
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.aclose()

    async def __aenter__(self) -> OpenAIPolicy:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# ---- the response -----------------------------------------------------------------------------


def parse_response(data: dict[str, Any], *, url: str = "the server") -> Generation:
    """Turn a chat-completion response body into a :class:`Generation`.

    >>> g = parse_response({"choices": [{"message": {"role": "assistant", "content": "4"},
    ...     "finish_reason": "stop", "logprobs": {"content": [{"token": "4", "logprob": -0.1}]},
    ...     "token_ids": [19]}], "prompt_token_ids": [1, 2], "usage": {"prompt_tokens": 2,
    ...     "completion_tokens": 1}})
    >>> g.message, g.token_ids, g.logprobs, g.prompt_token_ids, g.completion_tokens
    ({'role': 'assistant', 'content': '4'}, [19], [-0.1], [1, 2], 1)
    """
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise PolicyOutputError(f"{url} returned no choices: {json.dumps(data)[:300]}")
    choice = choices[0]
    raw = choice.get("message")
    if not isinstance(raw, dict):
        raise PolicyOutputError(f"{url} returned a choice without a message: {choice!r:.300}")
    message: dict[str, Any] = {"role": "assistant", "content": raw.get("content")}
    tool_calls = [_tool_call(tc, i) for i, tc in enumerate(raw.get("tool_calls") or [])]
    if tool_calls:
        message["tool_calls"] = tool_calls
    extra: dict[str, Any] = {}
    for key in ("reasoning_content", "reasoning"):
        if raw.get(key):
            extra["reasoning"] = raw[key]
    if choice.get("stop_reason") is not None:
        extra["stop_reason"] = choice["stop_reason"]

    logprobs = _logprobs(choice.get("logprobs"))
    token_ids = _ints(choice.get("token_ids"))
    # vLLM's chat API puts the prompt's ids on the response, its completions API on the choice.
    prompt_ids = _ints(data.get("prompt_token_ids")) or _ints(choice.get("prompt_token_ids"))
    raw_usage = data.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    completion_tokens = _int(usage.get("completion_tokens"))
    if not completion_tokens:
        completion_tokens = len(token_ids or logprobs or [])
    prompt_tokens = _int(usage.get("prompt_tokens")) or len(prompt_ids or [])
    return Generation(
        message=message,
        prompt_token_ids=prompt_ids,
        token_ids=token_ids,
        logprobs=logprobs,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        finish_reason=str(choice.get("finish_reason") or ""),
        extra=extra,
    )


def _tool_call(tc: Any, index: int) -> dict[str, Any]:
    """One tool call in the request format, whatever small liberties the server took."""
    tc = tc if isinstance(tc, dict) else {}
    raw_fn = tc.get("function")
    fn: dict[str, Any] = raw_fn if isinstance(raw_fn, dict) else {}
    arguments = fn.get("arguments", "")
    if not isinstance(arguments, str):
        # Some servers send the arguments as an object; the API (and the next request) wants
        # the JSON text.
        arguments = json.dumps(arguments)
    return {
        "id": str(tc.get("id") or f"call_{index}"),
        "type": "function",
        "function": {"name": str(fn.get("name") or ""), "arguments": arguments},
    }


def _logprobs(raw: Any) -> list[float] | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), list):
        return None
    out = []
    for entry in raw["content"]:
        value = entry.get("logprob") if isinstance(entry, dict) else None
        if not isinstance(value, int | float):
            return None  # a partial list would misalign with the tokens
        out.append(float(value))
    return out


def _ints(raw: Any) -> list[int] | None:
    if isinstance(raw, list) and all(isinstance(x, int) for x in raw):
        return list(raw)
    return None


def _int(raw: Any) -> int:
    return raw if isinstance(raw, int) else 0


def _status_message(response: httpx.Response, url: str, model: str) -> str:
    code = response.status_code
    detail = response.text[:300].strip()
    hint = {
        401: "the server wants an API key: pass api_key",
        403: "the API key was refused: check api_key",
        404: "check base_url (the API root, ending in /v1) and the model name "
        f"({model!r}; the server's GET /v1/models lists what it serves)",
        400: "the server refused the request; if it names an unknown field, pass "
        "return_token_ids=False (or logprobs=False)",
        429: "rate limited: lower the rollout concurrency",
    }.get(code, "the server failed; see its log")
    return f"POST {url} answered HTTP {code}: {detail!r}; {hint}"


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
