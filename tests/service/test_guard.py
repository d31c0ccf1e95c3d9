"""The body guard's JSON depth scan against a byte-by-byte reference, and the startup freeze."""

from __future__ import annotations

import gc
import random

from referee.service.guard import json_depth
from referee.service.server import freeze_startup_objects


def reference_depth(data: bytes) -> int:
    """The scan as it was: one byte at a time, a backslash escaping the next byte in a string."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def test_json_depth_agrees_with_the_byte_by_byte_scan() -> None:
    rng = random.Random(29)
    alphabet = b'[]{}"\\\\ a\n'  # brackets, quotes and runs of backslashes are what matter
    for _ in range(5_000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert json_depth(data) == reference_depth(data), data
    cases = {
        b'{"a": [1, {"b": "[[["}]}': 3,
        b'["\\"[[", [["\\\\"], []]]': 3,  # an escaped quote, then an escaped backslash
        b'[[["unterminated [[[[[[': 3,
        b"]]][[": 0,  # closers first never count below zero as depth
        b"": 0,
        b"[" * 100: 100,
    }
    for data, depth in cases.items():
        assert json_depth(data) == reference_depth(data) == depth, data


def test_freezing_the_startup_objects_leaves_them_out_of_collections() -> None:
    before = gc.get_freeze_count()
    held = [[i] for i in range(1000)]  # tracked containers that live on
    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() >= before + len(held)
    finally:
        gc.unfreeze()
