"""``PlainModel``: frozen dataclasses that answer the part of pydantic's model API referee uses.

The data on a one-shot command's path to its first verdict (the sandbox's
:class:`~referee.sandbox.ExecResult` and :class:`~referee.sandbox.metering.SandboxUsage`, the
:class:`~referee.verify.verdict.Verdict` and its parts) are records, not pydantic models:
importing pydantic and building one model costs about 0.1 CPU-second, which at load 4 is
0.3 s of wall time by itself, the whole of ``referee verify``'s budget for its first verdict
(bench/RESULTS.md §52). A record is built, copied and dumped in plain Python; pydantic is
imported only where a record is *validated* from outside data (``model_validate``,
``model_validate_json``) or described (``model_json_schema``), through a
:class:`pydantic.TypeAdapter` of the dataclass, and pydantic models and FastAPI take records
as fields and responses as they take any dataclass.

A record's ``__post_init__`` does what pydantic's validation did on construction for these
types: numbers given for a float field become floats (so ``reward=1`` dumps as ``1.0``, as
before), sequences become lists, nested records given as dicts become records, and a value
outside its field's range raises a :class:`ValueError` naming the field.

>>> from dataclasses import dataclass, field
>>> @dataclass(frozen=True)
... class Point(PlainModel):
...     x: float
...     tags: list[str] = field(default_factory=list)
...     def __post_init__(self) -> None:
...         coerce(self, floats=("x",), lists=("tags",))
>>> p = Point(1, ("a",))
>>> p.model_dump(), p.model_copy(update={"x": 2}).x
({'x': 1.0, 'tags': ['a']}, 2.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["PlainModel", "coerce", "maker", "plain"]

R = TypeVar("R", bound="PlainModel")


class PlainModel:
    """The mixin of a frozen dataclass: pydantic's ``model_*`` methods that referee calls."""

    __slots__ = ()

    def model_dump(
        self, *, mode: str = "python", exclude_none: bool = False, **kw: Any
    ) -> dict[str, Any]:
        """The record as plain data (dicts, lists, numbers, strings), as pydantic dumps it.
        Every field holds JSON's types already, so ``mode`` makes no difference; any other
        option of pydantic's (``include``, ``exclude``...) goes to pydantic itself."""
        out: dict[str, Any]
        if kw:
            out = _adapter(type(self)).dump_python(self, mode=mode, exclude_none=exclude_none, **kw)
        else:
            out = plain(self, exclude_none=exclude_none)
        return out

    def model_dump_json(self, **kw: Any) -> str:
        """The record as JSON text, through pydantic (as ``BaseModel.model_dump_json``)."""
        text: str = _adapter(type(self)).dump_json(self, **kw).decode()
        return text

    def model_copy(self: R, *, update: dict[str, Any] | None = None, deep: bool = False) -> R:
        """A copy with ``update``'s fields replaced (records are frozen: nothing is shared
        that could change, so ``deep`` changes nothing)."""
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]

    @classmethod
    def model_validate(cls: type[R], obj: Any) -> R:
        """A record from outside data (a dict, as JSON gives), validated by pydantic."""
        if isinstance(obj, cls):
            return obj
        out: R = _adapter(cls).validate_python(obj)
        return out

    @classmethod
    def model_validate_json(cls: type[R], data: str | bytes) -> R:
        """A record from JSON text, validated by pydantic."""
        out: R = _adapter(cls).validate_json(data)
        return out

    @classmethod
    def model_json_schema(cls, **kw: Any) -> dict[str, Any]:
        """The record's JSON schema, as pydantic writes it."""
        schema: dict[str, Any] = _adapter(cls).json_schema(**kw)
        return schema


_ADAPTERS: dict[type, Any] = {}


def _adapter(cls: type) -> Any:
    """pydantic's TypeAdapter of ``cls``, made once (building one is most of its cost)."""
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter

        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def plain(value: Any, *, exclude_none: bool = False) -> Any:
    """``value`` with every record in it turned into a dict (fields in declaration order) and
    every tuple into a list; ``exclude_none`` leaves out a record's fields that are None.

    >>> plain([(1, 2), {"a": None}])
    [[1, 2], {'a': None}]
    """
    if isinstance(value, PlainModel):
        out = {}
        for f in dataclasses.fields(value):  # type: ignore[arg-type]
            v = getattr(value, f.name)
            if v is None and exclude_none:
                continue
            out[f.name] = plain(v, exclude_none=exclude_none)
        return out
    if isinstance(value, list | tuple):
        return [plain(v, exclude_none=exclude_none) for v in value]
    if isinstance(value, dict):
        return {k: plain(v, exclude_none=exclude_none) for k, v in value.items()}
    return value


def coerce(
    record: Any,
    *,
    floats: Iterable[str] = (),
    lists: Iterable[str] = (),
    float_dicts: Iterable[str] = (),
    nested: dict[str, Callable[[Any], Any]] | None = None,
    ranges: dict[str, tuple[float, float]] | None = None,
    choices: dict[str, Iterable[str]] | None = None,
) -> None:
    """What pydantic's validation did to ``record``'s fields on construction, done in place:
    ``floats`` (int to float; None kept), ``lists`` (any sequence to a list, each item through
    ``nested``'s maker when the field has one), ``float_dicts`` (values to floats), ``nested``
    (a dict to the field's record, by its maker), ``ranges`` (inclusive bounds) and
    ``choices`` (the allowed strings). A wrong type or value raises :class:`ValueError`
    naming the record and the field."""
    name = type(record).__name__
    makers = nested or {}

    def put(key: str, value: Any) -> None:
        object.__setattr__(record, key, value)

    def bad(key: str, why: str) -> ValueError:
        return ValueError(f"{name}.{key}: {why}")

    for key in floats:
        v = getattr(record, key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise bad(key, f"a number is needed, got {type(v).__name__}")
        put(key, float(v))
    for key in float_dicts:
        v = getattr(record, key)
        if not isinstance(v, dict):
            raise bad(key, f"a dict is needed, got {type(v).__name__}")
        if any(isinstance(x, bool) or not isinstance(x, int | float) for x in v.values()):
            raise bad(key, "every value must be a number")
        put(key, {k: float(x) for k, x in v.items()})
    for key in lists:
        v = getattr(record, key)
        if isinstance(v, str | bytes | dict) or not isinstance(v, list | tuple):
            raise bad(key, f"a list is needed, got {type(v).__name__}")
        make = makers.get(key)
        put(key, [make(x) for x in v] if make else list(v))
    for key, make in makers.items():
        if key in set(lists):
            continue
        v = getattr(record, key)
        if v is not None:
            put(key, make(v))
    for key, (lo, hi) in (ranges or {}).items():
        v = getattr(record, key)
        if v is not None and not lo <= v <= hi:
            raise bad(key, f"must be between {lo:g} and {hi:g}, got {v!r}")
    for key, allowed in (choices or {}).items():
        v = getattr(record, key)
        if v not in set(allowed):
            raise bad(key, f"must be one of {', '.join(sorted(allowed))}; got {v!r}")


def maker(cls: type[R]) -> Callable[[Any], R]:
    """A ``nested`` maker for ``coerce``: a ``cls`` as it is, or one made from a dict."""

    def make(value: Any) -> R:
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls(**value)
        raise ValueError(f"a {cls.__name__} or a dict is needed, got {type(value).__name__}")

    return make
