"""SandboxFusion's client (``sandbox-fusion`` 0.3.7): ``POST {endpoint}/run_code``.

``sandbox_fusion.run_code`` (requests, sync) and ``run_code_async`` (aiohttp) build the URL as
``endpoint.rstrip('/') + '/run_code'`` and send ``RunCodeRequest.dict()`` (pydantic v1 API), all
seven fields. A reply other than 200, or one whose ``status`` is ``SandboxError``, raises inside
tenacity's retry: ``max_attempts`` tries (default 5) with exponential back-off and jitter, then
the last exception propagates.
"""

from __future__ import annotations

import asyncio
import sys

from sandbox_fusion import RunCodeRequest, RunCodeResponse, run_code, run_code_async


def run(
    base_url: str,
    code: str = "print(1 + 2)",
    *,
    stdin: str | None = None,
    language: str = "python",
    max_attempts: int = 5,
    client_timeout: float | None = None,
) -> RunCodeResponse:
    request = RunCodeRequest(code=code, language=language, stdin=stdin)
    return run_code(
        request, endpoint=base_url, max_attempts=max_attempts, client_timeout=client_timeout
    )


def run_async(
    base_url: str, code: str = "print(1 + 2)", *, max_attempts: int = 5
) -> RunCodeResponse:
    request = RunCodeRequest(code=code, language="python", run_timeout=5, compile_timeout=5)
    return asyncio.run(run_code_async(request, endpoint=base_url, max_attempts=max_attempts))


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"
    print(run(url, max_attempts=1).json())
