"""Environments by name: ``make_env("code")``, and ``register_env`` for your own.

>>> from referee.envs import make_env, env_names
>>> "code" in env_names() and "code-single" in env_names()
True
>>> make_env("code-single").single_turn                          # doctest: +SKIP
True

Names: ``"code"`` is :class:`~referee.envs.code.CodeEnv` choosing per task (single-turn for
function tasks, multi-turn with tools for repository tasks; pass ``single_turn=False`` for tools
on function tasks too); ``"code-single"`` is always single-turn. Keyword arguments go to the
constructor (``runtime=``, ``limits=``, ...), except ``shift=``: distribution-shift wrappers
around the environment (:func:`referee.envs.shift.wrap_env`), e.g.
``make_env("code", shift=["FailToolsTransiently(p=0.3)"])``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from referee.discovery import broken_note, discover_domains, note_part
from referee.envs.base import Environment
from referee.errors import ConfigError

__all__ = ["env_keywords", "env_names", "make_env", "register_env"]

EnvFactory = Callable[..., Environment]
_REGISTRY: dict[str, EnvFactory] = {}


def register_env(name: str, factory: EnvFactory, *, replace: bool = False) -> None:
    """Make ``make_env(name, **kw)`` call ``factory(**kw)``."""
    if not name or not isinstance(name, str):
        raise ConfigError("an environment name must be a non-empty string")
    if name in _REGISTRY and not replace:
        raise ConfigError(
            f"an environment named {name!r} is registered already; pass replace=True to override"
        )
    _REGISTRY[name] = factory
    note_part("env", name)


def env_names() -> list[str]:
    """The registered environments' names (the domains' included), sorted."""
    discover_domains()
    return sorted(_REGISTRY)


def env_keywords(name: str) -> frozenset[str] | None:
    """The keyword arguments ``make_env(name, **kw)`` can pass to the environment's factory
    (the class's constructor, or the function's parameters), or None when it takes any
    (``**kwargs``, as the code environments' factories do). A domain's factory registered with
    :func:`referee.domains.lazy` is read from its target (imported now). Callers that offer
    every environment the same options (the server's sessions) give each only what it takes:
    a domain's environment takes no ``runtime``, for one."""
    if name not in _REGISTRY:
        discover_domains()
    try:
        factory: Any = _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown environment {name!r}; available: {', '.join(env_names())}{broken_note()}"
        ) from None
    target = getattr(factory, "lazy_target", None)
    if isinstance(target, str):
        module, _, attribute = target.partition(":")
        factory = getattr(importlib.import_module(module), attribute)
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read: assume it takes what it is given
        return None
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def make_env(name: str, *, shift: Any = None, **kwargs: Any) -> Environment:
    """A new environment of the kind ``name``, with ``kwargs`` for its constructor, wrapped in
    the ``shift`` specs if any (:func:`referee.envs.shift.wrap_env`)."""
    if name not in _REGISTRY:
        discover_domains()  # a domain's environment registers when its package is imported
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown environment {name!r}; available: {', '.join(env_names())} "
            f"(register others with referee.envs.register_env){broken_note()}"
        ) from None
    if shift:
        from referee.envs.shift import parse_shifts, wrap_env

        specs = parse_shifts(shift)  # a bad spec fails before the environment is made
        return wrap_env(factory(**kwargs), specs)
    return factory(**kwargs)


def _code(**kwargs: Any) -> Environment:
    from referee.envs.code import CodeEnv

    kwargs.setdefault("single_turn", None)
    return CodeEnv(**kwargs)


def _code_single(**kwargs: Any) -> Environment:
    from referee.envs.code import CodeEnv

    if kwargs.pop("single_turn", True) is not True:
        raise ConfigError("'code-single' is single-turn; use make_env('code') for tools")
    return CodeEnv(single_turn=True, **kwargs)


register_env("code", _code)
register_env("code-single", _code_single)
