"""SandboxFusion's ``POST /run_code`` (``referee serve --compat sandbox-fusion``): veRL's code
rewards, and anything else built on the ``sandbox-fusion`` client, run in referee's sandbox
unchanged.

What the user writes:

* veRL: ``reward.sandbox_fusion.url=http://HOST:8000/run_code`` (veRL posts to the URL as
  given, so it ends in ``/run_code``);
* the ``sandbox-fusion`` client: ``run_code(request, endpoint="http://HOST:8000")`` or
  ``SANDBOX_FUSION_ENDPOINT=http://HOST:8000`` (the client appends ``/run_code``).

**This route takes no token** (neither client sends one): serve it on a trusted network only.

Request: SandboxFusion's ``RunCodeRequest``: ``code``, ``language``, ``compile_timeout`` and
``run_timeout`` (seconds, integer or float), ``stdin``, ``files`` (path -> base64 content; a
null content is skipped, as SandboxFusion does), ``fetch_files`` (paths returned base64 after
the run; a missing one is left out), ``memory_limit_MB`` (veRL sends it; -1 or absent: 1024).
Other keys are ignored. Languages: ``python`` (``python3`` too) and ``bash``, run by the same
sandbox as ``POST /v1/exec``; ``run_timeout`` is capped by the server's ``--deadline``.

Reply: SandboxFusion's ``RunCodeResponse``, ``compile_result`` always null (nothing is
compiled)::

    {"status": "Success"|"Failed", "message": "", "compile_result": null,
     "run_result": {"status": "Finished"|"TimeLimitExceeded", "execution_time": s,
                    "cpu_time": s, "return_code": int|null, "stdout": str, "stderr": str},
     "executor_pod_name": null, "files": {path: base64}}

``Failed`` when the run timed out (``TimeLimitExceeded``, ``return_code`` null) or exited
non-zero; a run killed by a signal has ``return_code`` -signal, as SandboxFusion's subprocess
reports it; one stopped by the memory limit says so at the end of its stderr.

Choices, where the protocol leaves room:

* **Another language** (``cpp``, ``java``...) gets 200 with ``status: "Failed"``, no results and
  a message saying which languages run here. SandboxFusion's own server answers 422, which its
  client retries five times with back-off; ``Failed`` is final for both clients (veRL scores
  the case -1, as it does the real server's 422), so a misconfigured language is not retried.
* **Admission**: veRL scores a 429 or 503 as a failed test case (-1) at once and retries only
  504, so this route never answers 429: it waits for room in line (``Admission.admit_waiting``)
  up to ``compile_timeout`` + 5 s (nothing is compiled, so that budget is free; veRL's own
  timeout is compile + run + 10 s), capped by ``--deadline``. If the wait times out, or the
  sandbox fails, or the run does not come back, the reply is **504** with a JSON error: the one
  status both veRL (3 tries) and the SandboxFusion client (any non-200) retry.
* Hostile input (a file name with ``..`` or an absolute path, content that is not base64, wrong
  types) is a 422 JSON error.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from referee.errors import ConfigError, SandboxError, UnsafePathError
from referee.sandbox import ExecResult, Limits
from referee.sandbox.paths import safe_relpath
from referee.service.admission import Busy
from referee.service.engine import ExecRequest, ServiceEngine
from referee.service.http_errors import ApiError
from referee.service.schemas import MAX_TEXT
from referee.service.state import Service

__all__ = ["LANGUAGES", "ROUTES", "router"]

ROUTES = ["POST /run_code"]
#: SandboxFusion language name -> the engine's.
LANGUAGES = {"python": "python", "python3": "python", "bash": "bash"}
DEFAULT_MEMORY_MB = 1024
MAX_MEMORY_MB = 65536
MAX_FILES = 256
#: Seconds past ``compile_timeout`` a request may wait for room (see the module).
WAIT_SLACK_S = 5.0
#: The most a fetched file may hold.
MAX_FETCH_BYTES = 16 << 20

router = APIRouter()


class RunCodeBody(BaseModel):
    # Lax on purpose for numbers: clients send 10 and 10.0 alike. Extra keys (veRL's
    # memory_limit_MB is modelled; pytest's args and future ones) are ignored.
    model_config = ConfigDict(extra="ignore")

    code: StrictStr = Field(max_length=MAX_TEXT)
    language: StrictStr = Field(max_length=64)
    compile_timeout: float = Field(default=10.0, ge=0, le=3600, allow_inf_nan=False)
    run_timeout: float = Field(default=10.0, gt=0, le=3600, allow_inf_nan=False)
    stdin: StrictStr | None = Field(default=None, max_length=MAX_TEXT)
    files: dict[StrictStr, StrictStr | None] = Field(default_factory=dict, max_length=MAX_FILES)
    fetch_files: list[StrictStr] = Field(default_factory=list, max_length=MAX_FILES)
    memory_limit_MB: int = Field(default=-1, ge=-1, le=1 << 30)


def _decode_files(files: Mapping[str, str | None]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name, content in files.items():
        safe_relpath(name)  # 422 for a name that would leave the workspace
        if content is None:
            continue
        try:
            out[name] = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError) as e:
            raise ApiError(
                422,
                "invalid_body",
                f"files[{name!r}] is not base64 ({e}); send each file's content base64-encoded",
            ) from None
    return out


def _memory_mb(requested: int) -> int:
    if requested <= 0:
        return DEFAULT_MEMORY_MB
    return min(max(requested, 16), MAX_MEMORY_MB)


def run_result(r: ExecResult) -> dict[str, Any]:
    """SandboxFusion's ``CommandRunResult`` for one run."""
    stderr = r.stderr
    if r.memory_exceeded:
        stderr += "\n[referee] the run was stopped at its memory limit\n"
    if r.timed_out:
        return {
            "status": "TimeLimitExceeded",
            "execution_time": r.wall_s,
            "cpu_time": r.cpu_s,
            "return_code": None,
            "stdout": r.stdout,
            "stderr": stderr,
        }
    code = r.exit_code if r.exit_code is not None else -(r.signal or 9)
    return {
        "status": "Finished",
        "execution_time": r.wall_s,
        "cpu_time": r.cpu_s,
        "return_code": code,
        "stdout": r.stdout,
        "stderr": stderr,
    }


def reply(r: ExecResult, files: Mapping[str, bytes]) -> dict[str, Any]:
    result = run_result(r)
    ok = result["status"] == "Finished" and result["return_code"] == 0 and not r.memory_exceeded
    return {
        "status": "Success" if ok else "Failed",
        "message": "",
        "compile_result": None,
        "run_result": result,
        "executor_pod_name": None,
        "files": {name: base64.b64encode(data).decode() for name, data in files.items()},
    }


def unsupported(language: str) -> dict[str, Any]:
    return {
        "status": "Failed",
        "message": (
            f"language {language!r} is not supported by this referee server; it runs "
            + ", ".join(sorted(LANGUAGES))
        ),
        "compile_result": None,
        "run_result": None,
        "executor_pod_name": None,
        "files": {},
    }


def _run_fetching(
    engine: ServiceEngine, req: ExecRequest, limits: Limits, fetch: list[str]
) -> tuple[ExecResult, dict[str, bytes]]:
    """The run in a workspace of its own, and the files it left that were asked for."""
    sandbox = engine.sandbox
    with sandbox.workspace() as ws:
        ws.write(dict(req.files))
        if req.language == "python":
            result = sandbox.run_python(req.code, stdin=req.stdin, limits=limits, workspace=ws)
        else:
            ws.write({"main.sh": req.code.encode()})
            result = sandbox.run(
                [req.language, "main.sh"], stdin=req.stdin, limits=limits, workspace=ws
            )
        fetched: dict[str, bytes] = {}
        for name in fetch:
            try:
                fetched[name] = ws.read(name, max_bytes=MAX_FETCH_BYTES)
            except (OSError, UnsafePathError, ConfigError):
                continue  # missing, not a regular file, or too large: left out, as SandboxFusion
        return result, fetched


async def _execute(
    engine: ServiceEngine, req: ExecRequest, fetch: list[str]
) -> tuple[ExecResult, dict[str, bytes]]:
    if not fetch:
        return await engine.exec(req), {}
    # engine.exec's limits, with a workspace kept until the files are read back.
    limit = engine.bound(req.timeout_s + 1.0)
    limits = Limits(timeout_s=min(req.timeout_s, limit), memory_mb=req.memory_mb)
    return await engine.run(
        _run_fetching, engine, req, limits, fetch, until=time.monotonic() + limit
    )


@router.post("/run_code")
async def run_code(body: RunCodeBody, request: Request) -> dict[str, Any]:
    service: Service = request.app.state.service
    engine = service.engine
    language = LANGUAGES.get(body.language)
    if language is None:
        return unsupported(body.language)
    files = _decode_files(body.files)
    for name in body.fetch_files:
        safe_relpath(name)
    req = ExecRequest(
        code=body.code,
        language=language,
        stdin=body.stdin.encode() if body.stdin is not None else None,
        files=files,
        timeout_s=min(body.run_timeout, engine.deadline_cap_s),
        memory_mb=_memory_mb(body.memory_limit_MB),
    )
    wait_s = min(engine.deadline_cap_s, body.compile_timeout + WAIT_SLACK_S)
    try:
        async with service.admission.admit_waiting(1, timeout_s=wait_s):
            result, fetched = await _execute(engine, req, body.fetch_files)
    except Busy as e:
        raise ApiError(504, "queue_timeout", str(e)) from None
    except SandboxError as e:
        raise ApiError(
            504,
            "sandbox_error",
            f"the sandbox failed: {e}; retry (an infrastructure error, not the program's)",
        ) from None
    return reply(result, fetched)
