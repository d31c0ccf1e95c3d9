"""Combinational and arithmetic designs: multiplexer, decoder, priority encoder, parity; adder,
subtractor, multiplier, ALU.

>>> d = adder(random.Random(1), 0.0)
>>> d.top, [p.name for p in d.ports], d.variant
('adder', ['a', 'b', 'cin', 'sum', 'cout'], 'adder')
"""

from __future__ import annotations

import random

from referee.domains.verilog.design import (
    Design,
    clog2,
    header,
    scale,
)
from referee.domains.verilog.spec import Port

__all__ = [
    "adder",
    "alu",
    "decoder",
    "multiplier",
    "mux",
    "parity",
    "priority_encoder",
    "subtractor",
]


# ---- combinational --------------------------------------------------------------------------
def mux(rng: random.Random, d: float) -> Design:
    n, w = scale(2, 8, d), scale(1, 16, d * rng.random())
    k = clog2(n)
    ports = (
        Port("sel", "input", k),
        *(Port(f"d{i}", "input", w) for i in range(n)),
        Port("y", "output", w),
    )
    arms = "".join(f"      {k}'d{i}: y = d{i};\n" for i in range(n))
    ref = (
        header("mux", ports, ("y",))
        + f"  always @* begin\n    case (sel)\n{arms}      default: y = {w}'d0;\n"
        "    endcase\n  end\nendmodule\n"
    )
    extra = f" When sel is {n} or more, y is 0." if n < 2**k else ""
    text = f"A {n}-to-1 multiplexer of {w}-bit words: y equals input d<sel>.{extra}"
    return Design("mux", "mux", text, ports, ref, features={"inputs": n, "width": w})


def decoder(rng: random.Random, d: float) -> Design:
    k = scale(2, 5, d)
    ports = (Port("a", "input", k), Port("en", "input", 1), Port("y", "output", 2**k))
    ref = header("decoder", ports) + f"  assign y = en ? ({2**k}'d1 << a) : {2**k}'d0;\nendmodule\n"
    text = (
        f"A {k}-to-{2**k} decoder with enable: when en is 1, exactly bit a of y is 1; "
        "when en is 0, y is all zeros."
    )
    return Design("decoder", "decoder", text, ports, ref, features={"width": k})


def priority_encoder(rng: random.Random, d: float) -> Design:
    n = scale(4, 16, d)
    k = clog2(n)
    highest = rng.random() < 0.5
    ports = (Port("req", "input", n), Port("idx", "output", k), Port("valid", "output", 1))
    loop = f"i = 0; i < {n}; i = i + 1" if highest else f"i = {n - 1}; i >= 0; i = i - 1"
    ref = (
        header("prio_enc", ports, ("idx", "valid"))
        + "  integer i;\n  always @* begin\n    idx = 0;\n    valid = 1'b0;\n"
        f"    for ({loop})\n      if (req[i]) begin\n        idx = i;\n        valid = 1'b1;\n"
        "      end\n  end\nendmodule\n"
    )
    which = "highest" if highest else "lowest"
    text = (
        f"A {n}-input priority encoder: idx is the index of the {which}-numbered bit of req "
        "that is 1, and valid is 1; when no bit of req is 1, idx is 0 and valid is 0."
    )
    return Design("priority-encoder", "prio_enc", text, ports, ref, features={"width": n})


def parity(rng: random.Random, d: float) -> Design:
    n = scale(4, 32, d)
    odd = rng.random() < 0.5
    ports = (Port("data", "input", n), Port("p", "output", 1))
    expr = "~^data" if odd else "^data"
    ref = header("parity", ports) + f"  assign p = {expr};\nendmodule\n"
    kind = "odd" if odd else "even"
    text = (
        f"A {kind}-parity generator over {n} bits: p is chosen so that data and p together "
        f"hold an {kind} number of ones."
    )
    return Design("parity", "parity", text, ports, ref, features={"width": n})


# ---- arithmetic -----------------------------------------------------------------------------
def adder(rng: random.Random, d: float) -> Design:
    w = scale(4, 32, d)
    ports = (
        Port("a", "input", w),
        Port("b", "input", w),
        Port("cin", "input", 1),
        Port("sum", "output", w),
        Port("cout", "output", 1),
    )
    ref = header("adder", ports) + "  assign {cout, sum} = a + b + cin;\nendmodule\n"
    text = f"A {w}-bit adder with carry in: {{cout, sum}} = a + b + cin (unsigned)."
    return Design("adder", "adder", text, ports, ref, features={"width": w})


def subtractor(rng: random.Random, d: float) -> Design:
    w = scale(4, 32, d)
    ports = (
        Port("a", "input", w),
        Port("b", "input", w),
        Port("diff", "output", w),
        Port("borrow", "output", 1),
    )
    ref = (
        header("subtractor", ports)
        + "  assign {borrow, diff} = {1'b0, a} - {1'b0, b};\nendmodule\n"
    )
    text = (
        f"A {w}-bit subtractor: diff = a - b modulo 2^{w}, and borrow is 1 exactly when a < b "
        "(unsigned)."
    )
    return Design("subtractor", "subtractor", text, ports, ref, features={"width": w})


def multiplier(rng: random.Random, d: float) -> Design:
    w = scale(3, 16, d)
    signed = d > 0.4 and rng.random() < 0.5
    ports = (Port("a", "input", w), Port("b", "input", w), Port("p", "output", 2 * w))
    expr = "$signed(a) * $signed(b)" if signed else "a * b"
    ref = header("multiplier", ports) + f"  assign p = {expr};\nendmodule\n"
    kind = "two's-complement signed" if signed else "unsigned"
    text = f"A {w}x{w}-bit {kind} multiplier: p is the full {2 * w}-bit product of a and b."
    return Design("multiplier", "multiplier", text, ports, ref, features={"width": w})


_ALU_OPS = (
    ("add", "a + b", "a + b (modulo 2^W)"),
    ("sub", "a - b", "a - b (modulo 2^W)"),
    ("and", "a & b", "bitwise a AND b"),
    ("or", "a | b", "bitwise a OR b"),
    ("xor", "a ^ b", "bitwise a XOR b"),
    ("shl", "a << 1", "a shifted left by one (a zero enters)"),
    ("shr", "a >> 1", "a shifted right by one, logically (a zero enters)"),
    ("slt", "(a < b) ? {W}'d1 : {W}'d0", "1 if a < b (unsigned), else 0"),
)


def alu(rng: random.Random, d: float) -> Design:
    w = scale(4, 32, d)
    n = scale(4, 8, d)
    ops = [_ALU_OPS[0], _ALU_OPS[1], *rng.sample(_ALU_OPS[2:], n - 2)]
    rng.shuffle(ops)
    k = 2 if n <= 4 else 3
    ports = (
        Port("op", "input", k),
        Port("a", "input", w),
        Port("b", "input", w),
        Port("y", "output", w),
        Port("zero", "output", 1),
    )
    arms = "".join(
        f"      {k}'d{i}: y = {expr.replace('{W}', str(w))};\n"
        for i, (_, expr, _) in enumerate(ops)
    )
    default = f"      default: y = {w}'d0;\n" if n < 2**k else ""
    ref = (
        header("alu", ports, ("y",))
        + f"  always @* begin\n    case (op)\n{arms}{default}    endcase\n  end\n"
        f"  assign zero = (y == {w}'d0);\nendmodule\n"
    )
    table = "; ".join(f"op={i}: {what.replace('W', str(w))}" for i, (_, _, what) in enumerate(ops))
    rest = " Other op values give y = 0." if n < 2**k else ""
    text = f"A {w}-bit ALU. y by op: {table}.{rest} zero is 1 exactly when y is 0."
    return Design("alu", "alu", text, ports, ref, features={"width": w, "ops": n})
