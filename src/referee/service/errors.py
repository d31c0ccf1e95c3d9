"""What :class:`~referee.service.client.Client` raises: one class per thing a caller does
differently, all under :class:`ServiceError` (a :class:`~referee.errors.RefereeError`).

=======================  ==========================  ============================================
class                    when                        what the caller does
=======================  ==========================  ============================================
``Unauthorized``         401                         fix the token
``RemoteNotFound``       404                         the session (or snapshot) is gone: open one
``InvalidRequest``       409, 413, 415, 422          change the request (``unknown_task_ids``...)
``ServerBusy``           429, retries used up        slow down, or a larger ``--queue``
``ServerUnavailable``    no connection; 503 after    start the server or wait; sessions are gone
                         retries
``DeadlineExceeded``     504; no answer in time      a longer ``deadline_s``/``timeout``, or less
``ServiceError``         anything else (500...)      report it
=======================  ==========================  ============================================

These are the client's side of the server's errors (:mod:`referee.service.http_errors`); the
server's own ``admission.Busy`` etc. never cross the wire as exceptions. ``status``, ``error``
(the server's kind, e.g. ``"unknown_task"``) and ``body`` (its whole JSON) are kept on each.

>>> e = error_for_status(422, {"error": "unknown_task", "message": "no task 'x'",
...                            "unknown_task_ids": ["x"]}, "POST http://h/v1/verify")
>>> type(e).__name__, e.unknown_task_ids
('InvalidRequest', ['x'])
"""

from __future__ import annotations

from typing import Any

from referee.errors import NotFoundError, RefereeError

__all__ = [
    "DeadlineExceeded",
    "InvalidRequest",
    "RemoteNotFound",
    "ServerBusy",
    "ServerUnavailable",
    "ServiceError",
    "Unauthorized",
    "error_for_status",
]


class ServiceError(RefereeError):
    """The referee server refused or failed a request (``status`` None: no HTTP answer)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error: str = "",
        body: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.body: dict[str, Any] = body or {}


class Unauthorized(ServiceError):
    """401: no token, or one the server's ``--tokens`` file does not hold."""


class RemoteNotFound(ServiceError, NotFoundError):
    """404: no such session or snapshot (closed, expired, another token's, or the server
    restarted since), or no such route."""


class InvalidRequest(ServiceError):
    """409, 413, 415, 422: the request itself must change (an unknown task id, a malformed body
    or one not sent as JSON, more work than the server admits at once, a step after the episode
    ended)."""

    @property
    def unknown_task_ids(self) -> list[str]:
        """The task ids the server does not hold (a 422 ``unknown_task``), else ``[]``."""
        ids = self.body.get("unknown_task_ids")
        return [str(i) for i in ids] if isinstance(ids, list) else []


class ServerBusy(ServiceError):
    """429 after the client's retries were used up: the server stayed at its admission limit."""

    def __init__(self, message: str, *, retry_after_s: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after_s = retry_after_s


class ServerUnavailable(ServiceError):
    """The server cannot be reached (refused, dropped the connection) or answered 503
    (draining, a broken sandbox) until the retries were used up."""


class DeadlineExceeded(ServiceError):
    """504 (the server killed the work at its deadline), or no answer within the client's
    ``timeout``."""


_BY_STATUS: dict[int, type[ServiceError]] = {
    401: Unauthorized,
    404: RemoteNotFound,
    409: InvalidRequest,
    413: InvalidRequest,
    415: InvalidRequest,
    422: InvalidRequest,
    429: ServerBusy,
    503: ServerUnavailable,
    504: DeadlineExceeded,
}


def error_for_status(status: int, body: dict[str, Any], where: str) -> ServiceError:
    """The exception for an error answer ``body`` (the server's ``{"error", "message"}``) with
    ``status`` to the request ``where`` (``"POST http://host/v1/verify"``)."""
    kind = str(body.get("error") or "")
    message = str(body.get("message") or "(no message)")
    text = f"{where}: {status} {kind}: {message}" if kind else f"{where}: {status}: {message}"
    return _BY_STATUS.get(status, ServiceError)(text, status=status, error=kind, body=body)
