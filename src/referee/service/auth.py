"""Bearer tokens: who may call the server, and whose sessions are whose.

The tokens file has one token per line, or ``name:token`` (the name shows in logs and owns the
sessions the token opens; a bare token's name is ``token-<line>``). Blank lines and ``#``
comments are skipped. Tokens are compared in constant time, against every known token, so the
time a wrong token takes says nothing about the right ones.

>>> tokens = Tokens.parse("alice:s3cret-token-1\\n# ci\\nbare-token-222\\n")
>>> tokens.name_of("Bearer s3cret-token-1"), tokens.name_of("Bearer nope")
('alice', None)
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from pathlib import Path

from referee.errors import ConfigError

__all__ = ["ANONYMOUS", "Tokens"]

#: The caller's name when the server runs with ``--no-auth``.
ANONYMOUS = "anonymous"
MIN_TOKEN_CHARS = 12


@dataclass(frozen=True)
class Tokens:
    """Known tokens by name (several names may not share a token)."""

    by_name: dict[str, bytes]

    @classmethod
    def parse(cls, text: str, *, source: str = "tokens file") -> Tokens:
        by_name: dict[str, bytes] = {}
        seen: set[bytes] = set()
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, token = line.rpartition(":")
            if not sep:
                name, token = f"token-{n}", line
            name, token = name.strip(), token.strip()
            if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
                raise ConfigError(
                    f"{source}:{n}: a token must be at least {MIN_TOKEN_CHARS} characters "
                    "without spaces (make one with: python -c 'import secrets; "
                    "print(secrets.token_urlsafe(32))')"
                )
            if not name:
                raise ConfigError(f"{source}:{n}: empty name before ':'; write name:token")
            if name in by_name:
                raise ConfigError(f"{source}:{n}: the name {name!r} appears twice")
            if token.encode() in seen:
                raise ConfigError(f"{source}:{n}: this token appears twice; give each its own")
            seen.add(token.encode())
            by_name[name] = token.encode()
        if not by_name:
            raise ConfigError(f"{source} holds no tokens; write one token (or name:token) per line")
        return cls(by_name)

    @classmethod
    def load(cls, path: str | Path) -> Tokens:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"--tokens: cannot read {str(path)!r}: {e.strerror}") from e
        except UnicodeDecodeError as e:
            raise ConfigError(f"--tokens: {str(path)!r} is not UTF-8 text") from e
        return cls.parse(text, source=str(path))

    def name_of(self, authorization: str | None) -> str | None:
        """The name of the token in an ``Authorization: Bearer <token>`` header; None when the
        header is missing, malformed or names no known token."""
        if not authorization:
            return None
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return None
        offered = given.strip().encode()
        found = None
        for name, token in self.by_name.items():  # every token is compared: constant time
            if hmac.compare_digest(offered, token):
                found = name
        return found
