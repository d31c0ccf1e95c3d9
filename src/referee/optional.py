"""Optional dependencies: each one checked before any work starts, refused in one line that
names the fix.

``pip install referee`` installs the light core (the sandbox, tasks, the verifiers that need no
heavy library, the service client, the CLI); the rest comes in extras (:data:`EXTRAS`,
``pip install 'referee[serve]'``). A command or domain that needs an extra calls
:func:`require_extra` first, so a core install refuses it in one line naming the extra instead
of a traceback from deep inside.

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

__all__ = [
    "EXTRAS",
    "installed",
    "installed_extras",
    "require_extra",
    "require_fsspec_backend",
    "require_module",
]

#: Each extra of pyproject.toml's ``[project.optional-dependencies]`` and the top-level modules
#: it brings (its packages' import names); tests/test_packaging.py keeps the two in step.
EXTRAS: dict[str, tuple[str, ...]] = {
    "serve": ("fastapi", "uvicorn", "websockets", "prometheus_client"),
    "ui": ("fastapi", "uvicorn", "jinja2"),
    "ray": ("ray",),
    "train": ("torch", "transformers", "tokenizers", "trl", "peft", "accelerate", "datasets"),
    "sql": ("duckdb", "pyarrow"),
    "dataframe": ("pandas", "numpy", "pandera"),
    "numeric": ("numpy", "scipy"),
    "reasoning": ("reasoning_gym",),
    "synth": ("libcst",),
    "parquet": ("pyarrow",),
    "s3": ("s3fs",),
    "gguf": ("gguf",),
    # installed --no-deps (requirements-bench.lock); the imports read their data files
    "bench-intercode": ("intercode",),
    "bench-agentbench": ("inspect_evals",),
    "bench-bfcl": ("bfcl_eval", "mpmath"),
    "bench-tau2": ("tau2", "deepdiff", "loguru"),
}


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (found without importing it)."""
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
    if any(installed(m) for m in modules):
        return
    name = package or modules[0]
    raise ConfigError(
        f"{needed_for} needs the Python package {name}, which is not installed: run "
        f"`pip install {name}` in referee's environment (.venv/bin/pip), or leave the option out"
    )


def require_extra(extra: str, modules: Sequence[str] | None = None, *, needed_for: str) -> None:
    """Refuse (:class:`ConfigError`) unless every one of ``modules`` (default: all of the
    extra's, :data:`EXTRAS`) can be imported; the message names ``pip install 'referee[EXTRA]'``.

    >>> require_extra("ray", ["json"], needed_for="--ray")
    >>> try:
    ...     require_extra("serve", ["nopkg"], needed_for="serve")
    ... except ConfigError as e:
    ...     print(e)
    serve needs referee's serve extra (nopkg is not installed): run `pip install 'referee[serve]'`
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; referee's extras: {', '.join(EXTRAS)}")
    missing = [m for m in (EXTRAS[extra] if modules is None else modules) if not installed(m)]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise ConfigError(
            f"{needed_for} needs referee's {extra} extra ({', '.join(missing)} {verb} not "
            f"installed): run `pip install 'referee[{extra}]'`"
        )


def installed_extras() -> dict[str, bool]:
    """Each extra of :data:`EXTRAS` and whether all its modules can be imported
    (``referee doctor`` lists them)."""
    return {extra: all(installed(m) for m in modules) for extra, modules in EXTRAS.items()}


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
