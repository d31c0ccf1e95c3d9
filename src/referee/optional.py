"""Optional dependencies: each one checked before any work starts, refused in one line that
names the fix.

An option that needs a package referee does not pin (``--report-to wandb``, an ``s3://``
store) used to fail with the library's traceback, minutes in: after the fine-tuning, after the
repository's environment was built. The commands call these checks first, so a missing package
is a :class:`~referee.errors.ConfigError` (exit 2) before anything is made.

>>> require_module("json", needed_for="--format json")
>>> try:
...     require_module("no_such_pkg", needed_for="--report-to nowhere", package="no-such-pkg")
... except ConfigError as e:
...     print(str(e)[:70], "pip install no-such-pkg" in str(e))
--report-to nowhere needs the Python package no-such-pkg, which is not True
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from referee.errors import ConfigError

__all__ = ["require_fsspec_backend", "require_module"]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken leftover
        return False


def require_module(
    module: str | Sequence[str], *, needed_for: str, package: str | None = None
) -> None:
    """Refuse (:class:`ConfigError`) unless ``module`` (or any one of several) can be imported.

    ``needed_for`` names the option that needs it; ``package`` the one to install (default:
    the first module's name)."""
    modules = [module] if isinstance(module, str) else list(module)
    if any(_installed(m) for m in modules):
        return
    name = package or modules[0]
    raise ConfigError(
        f"{needed_for} needs the Python package {name}, which is not installed: run "
        f"`pip install {name}` in referee's environment (.venv/bin/pip), or leave the option out"
    )


def require_fsspec_backend(url: str, *, option: str) -> None:
    """Refuse (:class:`ConfigError`) an fsspec ``url`` whose scheme is unknown or whose backend
    package is not installed (``s3://`` without ``s3fs``)."""
    import fsspec
    from fsspec.core import split_protocol

    protocol = split_protocol(url)[0] or "file"
    try:
        fsspec.get_filesystem_class(protocol)
    except ValueError as e:
        raise ConfigError(
            f"{option} {url}: unknown storage scheme {protocol!r}; use a folder, file://, "
            "memory:// or a scheme fsspec knows (s3://, gs://, ...)"
        ) from e
    except ImportError as e:
        package = _backend_package(protocol)
        raise ConfigError(
            f"{option} {url} needs the Python package {package} (fsspec's backend for "
            f"{protocol}://), which is not installed: run `pip install {package}` in referee's "
            "environment (.venv/bin/pip), or use a local folder"
        ) from e


def _backend_package(protocol: str) -> str:
    from fsspec.registry import known_implementations

    spec = known_implementations.get(protocol, {})
    return str(spec.get("class", protocol)).split(".")[0] or protocol
