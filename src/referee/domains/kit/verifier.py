"""The sandbox a domain's verifier holds: :class:`SandboxedVerifier`.

A domain's verifier runs answers in a sandbox made for its kind (one with its runner, its
toolchain, its packages) or in one it is given; it closes the sandbox with itself only where it
made it, and works as a context manager, ``with SqlVerifier() as verifier: ...``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from referee.sandbox import Sandbox

__all__ = ["SandboxedVerifier"]


class SandboxedVerifier:
    """Holds ``sandbox`` (``make()`` when None is given, then owned; ``own``: owned anyway) and
    closes what it owns on :meth:`close` or at the end of a ``with`` block."""

    def __init__(
        self, sandbox: Sandbox | None, make: Callable[[], Sandbox], *, own: bool = False
    ) -> None:
        self._own = sandbox is None or own
        self.sandbox = sandbox if sandbox is not None else make()

    def close(self) -> None:
        if self._own:
            self.sandbox.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
