"""Sequential designs: counters, shift registers and LFSRs, state machines (sequence detector,
traffic light). Each draws its reset style and says what stimulus it needs (an enable held
mostly on, a long run for a counter to wrap, a detector's pattern after resets).

>>> d = counter(random.Random(2), 0.5)
>>> d.clock, d.reset is not None, "long_cycles" in d.stimulus
('clk', True, True)
"""

from __future__ import annotations

import math
import random

from referee.domains.verilog.design import (
    Design,
    draw_reset,
    header,
    scale,
    seq_ports,
)
from referee.domains.verilog.spec import Port

__all__ = ["counter", "lfsr", "sequence_detector", "shift_register", "traffic_light"]


# ---- counters -------------------------------------------------------------------------------
def counter(rng: random.Random, d: float) -> Design:
    # At most 12 bits: the long run below takes every counter through its wrap.
    w = scale(3, 12, d)
    r = draw_reset(rng)
    kind = rng.choice(["up", "updown", "modulo"] if d > 0.3 else ["up", "modulo"])
    load = d > 0.6 and rng.random() < 0.5
    ports: list[Port] = [Port("en", "input", 1)]
    if kind == "updown":
        ports.append(Port("up", "input", 1))
    if load:
        ports += [Port("load", "input", 1), Port("din", "input", w)]
    ports.append(Port("q", "output", w))
    modulo = rng.randint(3, 2**w - 1) if kind == "modulo" else 0
    drift = 0.8 if kind == "updown" else 1.0
    if kind == "modulo":
        ports.append(Port("tc", "output", 1))
    all_ports = seq_ports(r, *ports)
    step = {
        "up": f"q <= q + {w}'d1;",
        "updown": f"q <= up ? q + {w}'d1 : q - {w}'d1;",
        "modulo": f"q <= (q == {w}'d{modulo - 1}) ? {w}'d0 : q + {w}'d1;",
    }[kind]
    body = "    else if (load) q <= din;\n" if load else ""
    ref = (
        header("counter", all_ports, ("q",)) + f"  always @(posedge clk{r.sensitivity}) begin\n"
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
            "bias": {k: b for k, b in (("en", 0.95), ("up", 0.9), ("load", 0.01))
                     if any(p.name == k for p in all_ports)},
            # One long run in which the counter wraps: enabled 95% of the time, net 0.8 up a
            # step when counting up and down, half as long again for luck.
            "long_cycles": math.ceil(1.5 * (modulo or 2**w) / (0.95 * drift)) + 8,
        },
    )  # fmt: skip


# ---- shift registers ------------------------------------------------------------------------
_LFSR_TAPS = {3: (3, 2), 4: (4, 3), 5: (5, 3), 6: (6, 5), 7: (7, 6), 8: (8, 6, 5, 4),
              10: (10, 7), 12: (12, 11, 10, 4), 16: (16, 15, 13, 4)}  # fmt: skip


def shift_register(rng: random.Random, d: float) -> Design:
    w = scale(4, 32, d)
    r = draw_reset(rng)
    universal = d > 0.5 and rng.random() < 0.6
    if universal:
        ports = seq_ports(
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
        ports = seq_ports(
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
        header("shift_reg", ports, ("q",)) + f"  always @(posedge clk{r.sensitivity}) begin\n"
        f"    if ({r.asserted}) q <= {w}'d0;\n{step}  end\nendmodule\n"
    )
    text += " Reset sets q to 0."
    bias = {"en": 0.9} if not universal else {}
    return Design(variant, "shift_reg", text, ports, ref, "clk", r, {"width": w}, {"bias": bias})


def lfsr(rng: random.Random, d: float) -> Design:
    sizes = sorted(_LFSR_TAPS)
    w = sizes[min(len(sizes) - 1, round(d * (len(sizes) - 1)))]
    taps = _LFSR_TAPS[w]
    r = draw_reset(rng)
    init = rng.randint(1, 2**w - 1)
    ports = seq_ports(r, Port("en", "input", 1), Port("q", "output", w))
    fb = " ^ ".join(f"q[{t - 1}]" for t in taps)
    ref = (
        header("lfsr", ports, ("q",)) + f"  always @(posedge clk{r.sensitivity}) begin\n"
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
    n = scale(3, 6, d)
    pattern = "".join(rng.choice("01") for _ in range(n))
    overlap = rng.random() < 0.5
    r = draw_reset(rng)
    ports = seq_ports(r, Port("x", "input", 1), Port("z", "output", 1))
    c = (n).bit_length()
    after = f"{c}'d{n}" if overlap else f"{c}'d0"
    ref = (
        header("seq_detect", ports, ("z",)) + f"  reg [{n - 1}:0] hist;\n  reg [{c - 1}:0] cnt;\n"
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
    r = draw_reset(rng)
    extra = (Port("ped", "input", 1),) if ped else ()
    ports = seq_ports(r, *extra, Port("light", "output", 2))
    t = max(g, y, rd).bit_length()
    early = " || ped" if ped else ""
    ref = (
        header("traffic", ports) + f"  localparam RED = 2'd0, GREEN = 2'd1, YELLOW = 2'd2;\n"
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
