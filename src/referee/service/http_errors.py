"""Every error the server returns is JSON that names the problem and the fix.

``{"error": "<kind>", "message": "<what to do>"}`` plus fields of the kind (``unknown_task_ids``,
``errors`` for a malformed body). No handler ever shows a traceback: an unexpected exception is
logged here and answered with a 500 that says so.

A body sent with a content type other than JSON's (``curl -d`` sends
``application/x-www-form-urlencoded``) is a 415 that names the header to send. It is not read as
JSON anyway: a web page can send such a request to a server on localhost without a CORS
preflight, and a ``--no-auth`` server would then run what the page sent.
"""

from __future__ import annotations

import email.message
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from referee.errors import ConfigError, NotFoundError, RefereeError, SandboxError, TaskError
from referee.service.admission import Busy, Draining, TooLarge
from referee.service.engine import UnknownTasks
from referee.service.sessions import SessionLimit

__all__ = ["ApiError", "error_body", "install_error_handlers"]

log = logging.getLogger("referee.service")


class ApiError(Exception):
    """An error with its HTTP status, raised by routes for what the caller must fix."""

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        headers: dict[str, str] | None = None,
        **fields: Any,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.headers = headers
        self.fields = fields


def error_body(error: str, message: str, **fields: Any) -> dict[str, Any]:
    return {"error": error, "message": message, **fields}


def _reply(
    status: int, error: str, message: str, headers: dict[str, str] | None = None, **fields: Any
) -> JSONResponse:
    return JSONResponse(error_body(error, message, **fields), status_code=status, headers=headers)


def _location(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


def _is_json(content_type: str | None) -> bool:
    """Whether FastAPI reads a body with this ``Content-Type`` as JSON (``application/json``,
    ``application/*+json``, with any parameters)."""
    if not content_type:
        return False
    header = email.message.Message()
    header["content-type"] = content_type
    subtype = header.get_content_subtype()
    return header.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def _not_json(request: Request, exc: RequestValidationError) -> JSONResponse | None:
    """The 415 for a body that failed validation because it was never read as JSON (sent as a
    form, as text, or with no ``Content-Type``), else None."""
    content_type = request.headers.get("content-type")
    if not isinstance(exc.body, bytes | bytearray) or not exc.body or _is_json(content_type):
        return None
    sent = (
        f"with Content-Type: {content_type.split(';')[0].strip()}"
        if content_type
        else "with no Content-Type"
    )
    return _reply(
        415,
        "unsupported_media_type",
        f"the request body was sent {sent}, so it was not read as JSON; send it with the "
        "header Content-Type: application/json (curl: -H 'Content-Type: application/json', "
        "or --json instead of -d)",
    )


def as_api_error(exc: BaseException) -> ApiError:
    """The HTTP form of a referee exception (used by every protocol's routes)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, UnknownTasks):
        return ApiError(422, "unknown_task", str(exc), unknown_task_ids=exc.ids)
    if isinstance(exc, NotFoundError):
        return ApiError(404, "not_found", str(exc))
    if isinstance(exc, Busy):
        return ApiError(429, "busy", str(exc), {"Retry-After": str(exc.retry_after_s)})
    if isinstance(exc, SessionLimit):
        return ApiError(429, "too_many_sessions", str(exc), {"Retry-After": "5"})
    if isinstance(exc, TooLarge):
        return ApiError(413, "too_much_work", str(exc))
    if isinstance(exc, Draining):
        return ApiError(503, "draining", str(exc), {"Retry-After": "5"})
    if isinstance(exc, TimeoutError):
        return ApiError(
            504,
            "deadline_exceeded",
            "the request's deadline passed and its work was killed; give a longer deadline_s "
            "(at most the server's --deadline) or send less work",
        )
    if isinstance(exc, ConfigError | TaskError):  # bad input from the caller
        return ApiError(422, "invalid_request", str(exc))
    if isinstance(exc, SandboxError):
        return ApiError(
            503,
            "sandbox_error",
            f"the sandbox failed: {exc}; retry, or tell the "
            "server's operator (an infrastructure error, not the request's fault)",
        )
    if isinstance(exc, RefereeError):
        return ApiError(500, "infra_error", f"{type(exc).__name__}: {exc}")
    log.exception("unexpected error in a request", exc_info=exc)
    return ApiError(
        500,
        "internal_error",
        "an unexpected error in the server (it is logged "
        "there); retry, and report it if it persists",
    )


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        not_json = _not_json(request, exc)
        if not_json is not None:
            return not_json
        raw = exc.errors()
        if raw and raw[0].get("type") == "json_invalid":
            where = raw[0].get("loc", ("body", 0))[-1]
            return _reply(
                422,
                "invalid_body",
                f"the request body is not valid JSON (at character {where}); send one JSON "
                "object with Content-Type: application/json",
            )
        errors = [
            {"field": _location(tuple(e.get("loc", ()))), "problem": str(e.get("msg", ""))}
            for e in raw[:20]
        ]
        summary = "; ".join(f"{e['field']}: {e['problem']}" for e in errors[:5])
        return _reply(
            422, "invalid_body", f"the request body is not valid: {summary}", errors=errors
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        messages = {404: "no such route; GET /v1 lists them", 405: "method not allowed here"}
        return _reply(
            exc.status_code,
            "http_error",
            messages.get(exc.status_code, str(exc.detail)),
            dict(exc.headers or {}),
        )

    async def _known(_: Request, exc: Exception) -> JSONResponse:
        e = as_api_error(exc)
        return _reply(e.status, e.error, e.message, e.headers, **e.fields)

    # Expected errors are answered here; anything else reaches Starlette's last-resort
    # handler below, which answers the same JSON and lets the server log the traceback.
    for kind in (ApiError, RefereeError, TimeoutError):
        app.add_exception_handler(kind, _known)
    app.add_exception_handler(Exception, _known)
