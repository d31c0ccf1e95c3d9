"""Shifts by name: spec strings, ``wrap_env`` and ``shift_factory``.

A spec names a wrapper and its parameters, in either of two spellings::

    FailToolsTransiently(p=0.3,seed=1)       # as a wrapper's ``spec`` writes it
    AddObservationNoise:rate=0.05,seed=1     # handier on a command line
    TruncateObservations                     # every parameter at its default

Values are read by the type of the parameter's default (numbers, ``true``/``false``, text);
a list is written with ``|`` (``tools=list_files|read_file``). Several specs in one string are
separated by ``;``. The first spec is the innermost wrapper: observations pass through the
wrappers in the order written, and tool calls in the reverse order.

>>> from referee.envs.shift import parse_shift
>>> parse_shift("AddObservationNoise:rate=0.05,seed=1")
ShiftSpec(name='AddObservationNoise', params={'rate': 0.05, 'seed': 1})
>>> parse_shift("FailToolsTransiently(p=0.3, tools=run_tests|read_file)").params
{'p': 0.3, 'tools': ('run_tests', 'read_file')}
>>> parse_shift("AddNoise")
Traceback (most recent call last):
...
referee.errors.ConfigError: unknown shift 'AddNoise'; the shifts are AddObservationNoise, ...
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.envs.base import Environment
from referee.envs.shift.base import EpisodeCounter, ShiftWrapper
from referee.envs.shift.observations import (
    AddObservationNoise,
    InjectMisleadingLogs,
    ParaphraseToolOutput,
    ReorderToolOutput,
    TruncateObservations,
)
from referee.envs.shift.tools import FailToolsTransiently, SlowTools
from referee.errors import ConfigError

__all__ = [
    "ShiftSpec",
    "parse_shift",
    "parse_shifts",
    "register_shift",
    "shift_factory",
    "shift_names",
    "wrap_env",
]

_WRAPPERS: dict[str, type[ShiftWrapper]] = {
    c.__name__: c
    for c in (
        AddObservationNoise,
        TruncateObservations,
        ReorderToolOutput,
        ParaphraseToolOutput,
        InjectMisleadingLogs,
        FailToolsTransiently,
        SlowTools,
    )
}
#: Keyword arguments of every wrapper that wrap_env sets, not a spec.
_INTERNAL = {"env", "counter", "position", "kw"}
_FORM = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\((.*)\)|:(.*))?\s*$", re.DOTALL)


def register_shift(cls: type[ShiftWrapper], *, replace: bool = False) -> None:
    """Make a wrapper of your own available to specs by its class name (VerbNoun, please)."""
    if not (isinstance(cls, type) and issubclass(cls, ShiftWrapper)):
        raise ConfigError(f"a shift must be a ShiftWrapper subclass, not {cls!r}")
    if cls.__name__ in _WRAPPERS and not replace:
        raise ConfigError(f"a shift named {cls.__name__} is registered already")
    _WRAPPERS[cls.__name__] = cls


def shift_names() -> list[str]:
    """The registered wrappers' names, in registration order."""
    return list(_WRAPPERS)


def _defaults(cls: type[ShiftWrapper]) -> dict[str, Any]:
    """A wrapper's spec parameters with their defaults (``seed`` last)."""
    out: dict[str, Any] = {}
    for klass in cls.__mro__:
        if not (isinstance(klass, type) and issubclass(klass, ShiftWrapper)):
            continue
        for p in inspect.signature(klass.__init__).parameters.values():
            if p.name not in _INTERNAL and p.name != "self" and p.default is not p.empty:
                out.setdefault(p.name, p.default)
    return out


@dataclass(frozen=True)
class ShiftSpec:
    """One wrapper by name, with the parameters given (the others keep their defaults)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    def apply(
        self, env: Environment, *, counter: EpisodeCounter | None = None, position: int = 0
    ) -> ShiftWrapper:
        """``env`` wrapped in this shift."""
        cls = _WRAPPERS[self.name]
        return cls(env, counter=counter, position=position, **self.params)


def _value(shift: str, name: str, raw: str, default: Any) -> Any:
    text = raw.strip().strip("'\"")
    try:
        if isinstance(default, bool):
            if text.lower() in ("true", "yes", "1"):
                return True
            if text.lower() in ("false", "no", "0"):
                return False
            raise ValueError(text)
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        kind = "true or false" if isinstance(default, bool) else type(default).__name__
        raise ConfigError(
            f"{shift}: {name} must be {kind}, got {raw.strip()!r} (default: {default!r})"
        ) from None
    if isinstance(default, tuple | list):
        return tuple(v.strip() for v in text.split("|") if v.strip())
    return text


def parse_shift(text: str) -> ShiftSpec:
    """One spec string (see the module) as a :class:`ShiftSpec`; a :class:`ConfigError`
    names an unknown wrapper (listing them), an unknown parameter (listing the wrapper's) or a
    value of the wrong type."""
    m = _FORM.match(text)
    if m is None:
        raise ConfigError(
            f"cannot read the shift {text!r}; write Name, Name(k=v,...) or Name:k=v,... "
            f"with one of {', '.join(_WRAPPERS)}"
        )
    name, body = m.group(1), m.group(2) if m.group(2) is not None else m.group(3) or ""
    if name not in _WRAPPERS:
        raise ConfigError(f"unknown shift {name!r}; the shifts are {', '.join(_WRAPPERS)}")
    defaults = _defaults(_WRAPPERS[name])
    params: dict[str, Any] = {}
    for item in (part for part in body.split(",") if part.strip()):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError(f"{name}: parameters are written key=value, got {item.strip()!r}")
        if key not in defaults:
            raise ConfigError(
                f"{name} has no parameter {key!r}; its parameters are {', '.join(defaults)}"
            )
        params[key] = _value(name, key, raw, defaults[key])
    spec = ShiftSpec(name, params)
    try:
        spec.apply(_Probe())  # the wrapper's own checks (ranges, choices) fail here, not later
    except ConfigError as e:
        raise ConfigError(f"{name}: {e}") from None
    return spec


class _Probe(Environment):
    """An environment that is never run: what a spec is checked against."""

    async def reset(self, task: Any) -> list[Any]:
        raise NotImplementedError

    async def step(self, message: Any) -> Any:
        raise NotImplementedError

    @property
    def done(self) -> bool:
        return True

    async def verify(self) -> Any:
        raise NotImplementedError


ShiftsArg = str | ShiftSpec | Sequence[str | ShiftSpec] | None


def parse_shifts(shifts: ShiftsArg) -> list[ShiftSpec]:
    """Specs from a string (``;``-separated), a :class:`ShiftSpec`, or a list of either."""
    if shifts is None:
        return []
    items: Sequence[str | ShiftSpec] = [shifts] if isinstance(shifts, str | ShiftSpec) else shifts
    out: list[ShiftSpec] = []
    for item in items:
        if isinstance(item, ShiftSpec):
            out.append(item)
        elif isinstance(item, str):
            out += [parse_shift(part) for part in item.split(";") if part.strip()]
        else:
            raise ConfigError(f"a shift is a spec string or a ShiftSpec, not {type(item).__name__}")
    return out


def wrap_env(
    env: Environment, shifts: ShiftsArg, *, counter: EpisodeCounter | None = None
) -> Environment:
    """``env`` wrapped in ``shifts``, the first innermost; ``env`` itself for none.

    >>> env = wrap_env(make_env("code"), "FailToolsTransiently(p=0.3);SlowTools")  # doctest: +SKIP
    >>> env.spec, env.env.spec                                                    # doctest: +SKIP
    ('SlowTools(delay_s=0.2,...)', 'FailToolsTransiently(p=0.3,tools=*,seed=0)')
    """
    for position, spec in enumerate(parse_shifts(shifts)):
        env = spec.apply(env, counter=counter, position=position)
    return env


def shift_factory(
    factory: Callable[[], Environment], shifts: ShiftsArg
) -> Callable[[], Environment]:
    """An environment factory (for :class:`~referee.rollout.runner.RolloutRunner`) whose
    environments are wrapped in ``shifts`` and share one :class:`EpisodeCounter`: the *k*-th
    episode of a task is perturbed as episode *k*, however many environments ran it. The specs
    are checked now, so a bad one fails before any rollout starts."""
    specs = parse_shifts(shifts)
    counter = EpisodeCounter()
    return lambda: wrap_env(factory(), specs, counter=counter)
