"""The designs the families draw from: each a description, a port list and a reference module.

A design function takes a seeded ``random.Random`` and a difficulty in [0, 1] (wider buses,
more operations, longer patterns, more states as it grows) and returns a :class:`Design`.
Sequential designs draw their reset style (synchronous or asynchronous, active high ``rst`` or
active low ``rst_n``) from the same generator, so a family exercises both.

>>> import random
>>> d = adder(random.Random(1), 0.0)
>>> d.top, [p.name for p in d.ports], d.variant
('adder', ['a', 'b', 'cin', 'sum', 'cout'], 'adder')
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from referee.domains.verilog.spec import Port

__all__ = ["DESIGNS", "Design", "Reset"]


@dataclass(frozen=True)
class Reset:
    """A reset style: the port, its active level, and whether it is synchronous."""

    name: str
    active: int
    sync: bool

    @property
    def sensitivity(self) -> str:
        """What the always block's event list adds for it (nothing when synchronous)."""
        if self.sync:
            return ""
        return f" or {'posedge' if self.active else 'negedge'} {self.name}"

    @property
    def asserted(self) -> str:
        return self.name if self.active else f"!{self.name}"


@dataclass(frozen=True)
class Design:
    variant: str
    top: str
    description: str
    ports: tuple[Port, ...]
    reference: str
    clock: str | None = None
    reset: Reset | None = None
    features: dict[str, float] = field(default_factory=dict)
    #: Stimulus settings of the design (``bias``, ``long_cycles``, ``reset_rate``: see
    #: :class:`~referee.domains.verilog.spec.Stimulus`).
    stimulus: dict[str, object] = field(default_factory=dict)


def _scale(lo: int, hi: int, d: float) -> int:
    return lo + round(d * (hi - lo))


def _reset(rng: random.Random) -> Reset:
    active = rng.random() < 0.6
    return Reset("rst" if active else "rst_n", int(active), sync=rng.random() < 0.5)


def _bits(w: int) -> str:
    return f"[{w - 1}:0] " if w > 1 else ""


def _clog2(n: int) -> int:
    return max(1, (n - 1).bit_length())


def _seq_ports(reset: Reset, *rest: Port) -> tuple[Port, ...]:
    return (Port("clk", "input", 1), Port(reset.name, "input", 1), *rest)


def _header(top: str, ports: tuple[Port, ...], regs: tuple[str, ...] = ()) -> str:
    decls = []
    for p in ports:
        kind = f"{p.direction} reg" if p.name in regs else p.direction
        decls.append(f"{kind} {_bits(p.width)}{p.name}".replace("  ", " "))
    return f"module {top}({', '.join(decls)});\n"


# ---- combinational --------------------------------------------------------------------------
def mux(rng: random.Random, d: float) -> Design:
    n, w = _scale(2, 8, d), _scale(1, 16, d * rng.random())
    k = _clog2(n)
    ports = (
        Port("sel", "input", k),
        *(Port(f"d{i}", "input", w) for i in range(n)),
        Port("y", "output", w),
    )
    arms = "".join(f"      {k}'d{i}: y = d{i};\n" for i in range(n))
    ref = (
        _header("mux", ports, ("y",))
        + f"  always @* begin\n    case (sel)\n{arms}      default: y = {w}'d0;\n"
        "    endcase\n  end\nendmodule\n"
    )
    extra = f" When sel is {n} or more, y is 0." if n < 2**k else ""
    text = f"A {n}-to-1 multiplexer of {w}-bit words: y equals input d<sel>.{extra}"
    return Design("mux", "mux", text, ports, ref, features={"inputs": n, "width": w})


def decoder(rng: random.Random, d: float) -> Design:
    k = _scale(2, 5, d)
    ports = (Port("a", "input", k), Port("en", "input", 1), Port("y", "output", 2**k))
    ref = (
        _header("decoder", ports) + f"  assign y = en ? ({2**k}'d1 << a) : {2**k}'d0;\nendmodule\n"
    )
    text = (
        f"A {k}-to-{2**k} decoder with enable: when en is 1, exactly bit a of y is 1; "
        "when en is 0, y is all zeros."
    )
    return Design("decoder", "decoder", text, ports, ref, features={"width": k})


def priority_encoder(rng: random.Random, d: float) -> Design:
    n = _scale(4, 16, d)
    k = _clog2(n)
    highest = rng.random() < 0.5
    ports = (Port("req", "input", n), Port("idx", "output", k), Port("valid", "output", 1))
    loop = f"i = 0; i < {n}; i = i + 1" if highest else f"i = {n - 1}; i >= 0; i = i - 1"
    ref = (
        _header("prio_enc", ports, ("idx", "valid"))
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
    n = _scale(4, 32, d)
    odd = rng.random() < 0.5
    ports = (Port("data", "input", n), Port("p", "output", 1))
    expr = "~^data" if odd else "^data"
    ref = _header("parity", ports) + f"  assign p = {expr};\nendmodule\n"
    kind = "odd" if odd else "even"
    text = (
        f"A {kind}-parity generator over {n} bits: p is chosen so that data and p together "
        f"hold an {kind} number of ones."
    )
    return Design("parity", "parity", text, ports, ref, features={"width": n})


# ---- arithmetic -----------------------------------------------------------------------------
def adder(rng: random.Random, d: float) -> Design:
    w = _scale(4, 32, d)
    ports = (
        Port("a", "input", w),
        Port("b", "input", w),
        Port("cin", "input", 1),
        Port("sum", "output", w),
        Port("cout", "output", 1),
    )
    ref = _header("adder", ports) + "  assign {cout, sum} = a + b + cin;\nendmodule\n"
    text = f"A {w}-bit adder with carry in: {{cout, sum}} = a + b + cin (unsigned)."
    return Design("adder", "adder", text, ports, ref, features={"width": w})


def subtractor(rng: random.Random, d: float) -> Design:
    w = _scale(4, 32, d)
    ports = (
        Port("a", "input", w),
        Port("b", "input", w),
        Port("diff", "output", w),
        Port("borrow", "output", 1),
    )
    ref = (
        _header("subtractor", ports)
        + "  assign {borrow, diff} = {1'b0, a} - {1'b0, b};\nendmodule\n"
    )
    text = (
        f"A {w}-bit subtractor: diff = a - b modulo 2^{w}, and borrow is 1 exactly when a < b "
        "(unsigned)."
    )
    return Design("subtractor", "subtractor", text, ports, ref, features={"width": w})


def multiplier(rng: random.Random, d: float) -> Design:
    w = _scale(3, 16, d)
    signed = d > 0.4 and rng.random() < 0.5
    ports = (Port("a", "input", w), Port("b", "input", w), Port("p", "output", 2 * w))
    expr = "$signed(a) * $signed(b)" if signed else "a * b"
    ref = _header("multiplier", ports) + f"  assign p = {expr};\nendmodule\n"
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
    w = _scale(4, 32, d)
    n = _scale(4, 8, d)
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
        _header("alu", ports, ("y",))
        + f"  always @* begin\n    case (op)\n{arms}{default}    endcase\n  end\n"
        f"  assign zero = (y == {w}'d0);\nendmodule\n"
    )
    table = "; ".join(f"op={i}: {what.replace('W', str(w))}" for i, (_, _, what) in enumerate(ops))
    rest = " Other op values give y = 0." if n < 2**k else ""
    text = f"A {w}-bit ALU. y by op: {table}.{rest} zero is 1 exactly when y is 0."
    return Design("alu", "alu", text, ports, ref, features={"width": w, "ops": n})


# ---- counters -------------------------------------------------------------------------------
def counter(rng: random.Random, d: float) -> Design:
    w = _scale(3, 16, d)
    r = _reset(rng)
    kind = rng.choice(["up", "updown", "modulo"] if d > 0.3 else ["up", "modulo"])
    load = d > 0.6 and rng.random() < 0.5
    ports: list[Port] = [Port("en", "input", 1)]
    if kind == "updown":
        ports.append(Port("up", "input", 1))
    if load:
        ports += [Port("load", "input", 1), Port("din", "input", w)]
    ports.append(Port("q", "output", w))
    modulo = rng.randint(3, 2**w - 1) if kind == "modulo" else 0
    if kind == "modulo":
        ports.append(Port("tc", "output", 1))
    all_ports = _seq_ports(r, *ports)
    step = {
        "up": f"q <= q + {w}'d1;",
        "updown": f"q <= up ? q + {w}'d1 : q - {w}'d1;",
        "modulo": f"q <= (q == {w}'d{modulo - 1}) ? {w}'d0 : q + {w}'d1;",
    }[kind]
    body = "    else if (load) q <= din;\n" if load else ""
    ref = (
        _header("counter", all_ports, ("q",)) + f"  always @(posedge clk{r.sensitivity}) begin\n"
        f"    if ({r.asserted}) q <= {w}'d0;\n{body}    else if (en) {step}\n  end\n"
        + (f"  assign tc = (q == {w}'d{modulo - 1});\n" if kind == "modulo" else "")
        + "endmodule\n"
    )
    what = {
        "up": f"A {w}-bit up counter q, wrapping from {2**w - 1} to 0.",
        "updown": f"A {w}-bit up/down counter q: it counts up when up is 1 and down when up "
        "is 0, wrapping around at both ends.",
        "modulo": f"A modulo-{modulo} counter q ({w} bits): it counts 0, 1, ..., {modulo - 1}, "
        f"then 0 again. tc is 1 exactly while q is {modulo - 1} (combinational from q).",
    }[kind]
    loading = " When load is 1, q takes din at the edge (load wins over en)." if load else ""
    text = f"{what} It counts only at edges where en is 1.{loading} Reset sets q to 0."
    return Design(
        f"counter-{kind}" + ("-load" if load else ""),
        "counter",
        text,
        all_ports,
        ref,
        clock="clk",
        reset=r,
        features={"width": w, "load": float(load)},
        stimulus={
            "bias": {k: b for k, b in (("en", 0.95), ("up", 0.9), ("load", 0.03))
                     if any(p.name == k for p in all_ports)},
            # One long run in which the counter wraps (or gets as far as 4096 cycles take it).
            "long_cycles": min(4096, math.ceil(1.3 * (modulo or 2**w) / 0.95) + 8),
        },
    )  # fmt: skip


# ---- shift registers ------------------------------------------------------------------------
_LFSR_TAPS = {3: (3, 2), 4: (4, 3), 5: (5, 3), 6: (6, 5), 7: (7, 6), 8: (8, 6, 5, 4),
              10: (10, 7), 12: (12, 11, 10, 4), 16: (16, 15, 13, 4)}  # fmt: skip


def shift_register(rng: random.Random, d: float) -> Design:
    w = _scale(4, 32, d)
    r = _reset(rng)
    universal = d > 0.5 and rng.random() < 0.6
    if universal:
        ports = _seq_ports(
            r,
            Port("mode", "input", 2),
            Port("sin", "input", 1),
            Port("din", "input", w),
            Port("q", "output", w),
        )
        step = (
            "    else case (mode)\n"
            f"      2'd1: q <= {{q[{w - 2}:0], sin}};\n"
            f"      2'd2: q <= {{sin, q[{w - 1}:1]}};\n"
            "      2'd3: q <= din;\n"
            "      default: q <= q;\n    endcase\n"
        )
        text = (
            f"A {w}-bit universal shift register q. At each edge, by mode: 0 holds q; 1 shifts "
            "left (q[0] takes sin); 2 shifts right (q[MSB] takes sin); 3 loads din."
        )
        variant = "shift-universal"
    else:
        left = rng.random() < 0.5
        ports = _seq_ports(
            r, Port("en", "input", 1), Port("sin", "input", 1), Port("q", "output", w)
        )
        shifted = f"{{q[{w - 2}:0], sin}}" if left else f"{{sin, q[{w - 1}:1]}}"
        step = f"    else if (en) q <= {shifted};\n"
        where = "q[0]" if left else f"q[{w - 1}]"
        text = (
            f"A {w}-bit serial-in shift register q: at each edge where en is 1 it shifts "
            f"{'left' if left else 'right'} by one and {where} takes sin."
        )
        variant = "shift-left" if left else "shift-right"
    ref = (
        _header("shift_reg", ports, ("q",)) + f"  always @(posedge clk{r.sensitivity}) begin\n"
        f"    if ({r.asserted}) q <= {w}'d0;\n{step}  end\nendmodule\n"
    )
    text += " Reset sets q to 0."
    bias = {"en": 0.9} if not universal else {}
    return Design(variant, "shift_reg", text, ports, ref, "clk", r, {"width": w}, {"bias": bias})


def lfsr(rng: random.Random, d: float) -> Design:
    sizes = sorted(_LFSR_TAPS)
    w = sizes[min(len(sizes) - 1, round(d * (len(sizes) - 1)))]
    taps = _LFSR_TAPS[w]
    r = _reset(rng)
    init = rng.randint(1, 2**w - 1)
    ports = _seq_ports(r, Port("en", "input", 1), Port("q", "output", w))
    fb = " ^ ".join(f"q[{t - 1}]" for t in taps)
    ref = (
        _header("lfsr", ports, ("q",)) + f"  always @(posedge clk{r.sensitivity}) begin\n"
        f"    if ({r.asserted}) q <= {w}'d{init};\n"
        f"    else if (en) q <= {{q[{w - 2}:0], {fb}}};\n  end\nendmodule\n"
    )
    bits = ", ".join(f"q[{t - 1}]" for t in taps)
    text = (
        f"A {w}-bit Fibonacci LFSR q. Reset loads {w}'d{init}. At each edge where en is 1, q "
        f"shifts left by one and q[0] takes the XOR of {bits} (their values before the edge)."
    )
    return Design("lfsr", "lfsr", text, ports, ref, "clk", r, {"width": w}, {"bias": {"en": 0.95}})


# ---- finite-state machines ------------------------------------------------------------------
def sequence_detector(rng: random.Random, d: float) -> Design:
    n = _scale(3, 6, d)
    pattern = "".join(rng.choice("01") for _ in range(n))
    overlap = rng.random() < 0.5
    r = _reset(rng)
    ports = _seq_ports(r, Port("x", "input", 1), Port("z", "output", 1))
    c = (n).bit_length()
    after = f"{c}'d{n}" if overlap else f"{c}'d0"
    ref = (
        _header("seq_detect", ports, ("z",)) + f"  reg [{n - 1}:0] hist;\n  reg [{c - 1}:0] cnt;\n"
        f"  wire [{n - 1}:0] nxt = {{hist[{n - 2}:0], x}};\n"
        f"  always @(posedge clk{r.sensitivity}) begin\n"
        f"    if ({r.asserted}) begin\n      hist <= {n}'d0;\n      cnt <= {c}'d0;\n"
        "      z <= 1'b0;\n    end else begin\n      hist <= nxt;\n"
        f"      if (cnt >= {c}'d{n - 1} && nxt == {n}'b{pattern}) begin\n"
        f"        z <= 1'b1;\n        cnt <= {after};\n      end else begin\n"
        f"        z <= 1'b0;\n        cnt <= (cnt == {c}'d{n}) ? cnt : cnt + {c}'d1;\n"
        "      end\n    end\n  end\nendmodule\n"
    )
    rule = (
        "Occurrences may overlap (the end of one can begin the next)."
        if overlap
        else "Occurrences may not overlap: after a detection, matching starts afresh with the "
        "next bit."
    )
    text = (
        f"A detector of the bit sequence {pattern} (first bit first) on the serial input x, "
        "sampled at each rising edge. z is registered: it is 1 for the one cycle after the "
        f"edge that samples the last bit of an occurrence, else 0. {rule} Bits sampled before "
        "a reset do not count; reset sets z to 0."
    )
    return Design(
        "sequence-detector", "seq_detect", text, ports, ref, "clk", r,
        {"length": n, "overlap": float(overlap)},
        # The pattern, overlapping with itself, also right after resets (where detectors go
        # wrong): random bits alone would show it too rarely.
        {
            "reset_rate": 0.05,
            "motifs": {
                "x": [pattern, pattern * 2, pattern + pattern[1:], pattern[: n // 2] + pattern]
            },
        },
    )  # fmt: skip


def traffic_light(rng: random.Random, d: float) -> Design:
    g, y, rd = rng.randint(2, 3 + round(6 * d)), rng.randint(1, 3), rng.randint(2, 3 + round(6 * d))
    ped = d > 0.4 and rng.random() < 0.6
    r = _reset(rng)
    extra = (Port("ped", "input", 1),) if ped else ()
    ports = _seq_ports(r, *extra, Port("light", "output", 2))
    t = max(g, y, rd).bit_length()
    early = " || ped" if ped else ""
    ref = (
        _header("traffic", ports) + f"  localparam RED = 2'd0, GREEN = 2'd1, YELLOW = 2'd2;\n"
        f"  reg [1:0] state;\n  reg [{t - 1}:0] t;\n"
        f"  always @(posedge clk{r.sensitivity}) begin\n"
        f"    if ({r.asserted}) begin\n      state <= GREEN;\n      t <= {t}'d0;\n"
        "    end else case (state)\n"
        f"      GREEN: if (t == {t}'d{g - 1}{early}) begin state <= YELLOW; t <= {t}'d0; end\n"
        f"             else t <= t + {t}'d1;\n"
        f"      YELLOW: if (t == {t}'d{y - 1}) begin state <= RED; t <= {t}'d0; end\n"
        f"              else t <= t + {t}'d1;\n"
        f"      RED: if (t == {t}'d{rd - 1}) begin state <= GREEN; t <= {t}'d0; end\n"
        f"           else t <= t + {t}'d1;\n"
        "      default: begin state <= GREEN; t <= 0; end\n"
        "    endcase\n  end\n  assign light = state;\nendmodule\n"
    )
    push = (
        " If ped is 1 at an edge while the light is green, the light turns yellow at that edge."
        if ped
        else ""
    )
    text = (
        f"A traffic-light controller. light is 2'd1 (green) for {g} cycles, then 2'd2 (yellow) "
        f"for {y} cycles, then 2'd0 (red) for {rd} cycles, and again green, and so on. Reset "
        f"starts a fresh green period.{push}"
    )
    return Design(
        "traffic-light" + ("-ped" if ped else ""), "traffic", text, ports, ref, "clk", r,
        {"states": 3, "cycles": g + y + rd, "ped": float(ped)},
        {"bias": {"ped": 0.03}} if ped else {},  # rare presses: full green periods too
    )  # fmt: skip


#: The designs of each family.
DESIGNS = {
    "v-comb": (mux, decoder, priority_encoder, parity),
    "v-arith": (adder, subtractor, multiplier, alu),
    "v-counter": (counter,),
    "v-shift": (shift_register, lfsr),
    "v-fsm": (sequence_detector, traffic_light),
}
