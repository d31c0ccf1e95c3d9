"""The grader's testbench: stimulus drawn on the host, a testbench generated from the port list,
and the per-cycle records it prints read back on the host.

Each cycle the testbench applies one input vector (``$readmemh`` of ``stim.hex``), waits for
combinational logic to settle, prints one record of every output (before the clock's rising
edge, so registered outputs show the state the previous edges made and Mealy outputs the
current inputs), then raises the clock, and, with the clock high, prints a second record
(``h<cycle>``: the state the edge just made), then lowers the clock. Both phases are compared:
an output that reads the clock (inverted while it is high) cannot hide in the phase never
sampled. Records are framed by a per-run random nonce
the candidate cannot know: the candidate module may not print at all (:mod:`.source`), and
anything else on stdout (warnings, a forged verdict) lacks the frame. The testbench's own
names also carry a nonce, so no simple name of the candidate can resolve to one of them.

Stimulus: ``segments`` runs of ``cycles`` cycles; each run starts with ``reset_cycles`` of
reset, then random inputs with a short reset pulse now and then (``reset_rate``, 1 in 40
cycles by default); the first run walks corner values (all zeros, all ones, one-hot,
alternating) before going random. In the odd runs, 1-bit inputs named in ``bias`` are 1 with
their own chance (an enable held mostly on, a pedestrian button rarely pressed); a final long
run (``long_cycles``) is biased so, and has no reset after its start. ``motifs`` are bit
strings played on a 1-bit input: often right after a reset, now and then elsewhere.

>>> from referee.domains.verilog.spec import Port, Stimulus, VerilogSpec
>>> spec = VerilogSpec("t", "inv", (Port("a", "input", 1), Port("y", "output", 1)), None,
...                    None, 1, "", Stimulus(seed=3, segments=1, cycles=4, reset_cycles=0))
>>> vectors = stimulus_vectors(spec)
>>> len(vectors), vectors[:2]
(4, [0, 1])
>>> parse_records("abc 0 1\\nabc 1 0\\nnoise\\nabc END 2\\n", "abc", 2, 1)
([['1'], ['0']], True)
>>> parse_records("abc 0 1\\nabc h0 0\\nabc END 1\\n", "abc", 1, 1, phases=2)
([['1', '0']], True)
"""

from __future__ import annotations

import random
import re

from referee.domains.verilog.spec import Port, VerilogSpec

__all__ = [
    "STIMULUS_FILE",
    "parse_records",
    "record_phases",
    "stimulus_hex",
    "stimulus_vectors",
    "testbench",
]

STIMULUS_FILE = "stim.hex"
#: Nanoseconds: inputs change at 0, outputs are sampled at 4, the clock rises at 5, outputs are
#: sampled again at 9 (clock high) and the clock falls at 10 (when the next cycle's inputs
#: change).
_SETTLE, _PERIOD = 4, 10


def record_phases(spec: VerilogSpec) -> int:
    """Records per cycle: 2 for a clocked design (clock low, then high), else 1."""
    return 2 if spec.clock else 1


def _corners(width: int) -> list[int]:
    ones = (1 << width) - 1
    alt = int("01" * width, 2) & ones
    return [0, ones, 1, 1 << (width - 1), alt, ones ^ alt]


_NUMBER = r"(?:(\d+)?\s*'\s*[sS]?\s*([bBoOdDhH])\s*([0-9a-fA-F_]+)|(\d+))"
_OPERAND = r"([A-Za-z_]\w*)(?:\s*\[\s*(\d+)\s*(?::\s*(\d+)\s*)?\])?"
_COMPARE = re.compile(rf"{_OPERAND}\s*(===?|!==?|<=|>=|<|>)\s*{_NUMBER}")
_COMPARE_REV = re.compile(rf"{_NUMBER}\s*(===?|!==?|<=|>=|<|>)\s*{_OPERAND}")
_CASE = re.compile(r"\bcase[zx]?\s*\(\s*([A-Za-z_]\w*)\s*\)(.*?)\bendcase\b", re.S)
_ITEM = re.compile(rf"(?:^|;|\bend\b|\bbegin\b)\s*((?:{_NUMBER}\s*,\s*)*{_NUMBER})\s*:(?!:)")
_BASES = {"b": 2, "o": 8, "d": 10, "h": 16}
#: The chance that an input with branch values (:func:`branch_values`) takes one of them in a
#: random cycle.
BRANCH_RATE = 0.25


def _literal(size: str | None, base: str | None, digits: str | None, plain: str | None) -> int:
    if plain is not None:
        return int(plain)
    return int((digits or "0").replace("_", ""), _BASES[(base or "d").lower()])


def branch_values(spec: VerilogSpec) -> dict[str, list[tuple[int, int]]]:
    """Input -> the values the reference branches on, as (value, mask of the bits it sets):
    literals it compares the input with (``==``, ``!=``, ``<``...: the value, and one each
    side for an ordering) and its ``case`` items, read from the reference's source (comments
    removed; a light parse, not an elaborator: a slice ``a[7:4] == 4'h5`` sets those bits and
    leaves the others random).

    >>> from referee.domains.verilog.spec import Port, Stimulus, VerilogSpec
    >>> ref = "module m(input [7:0] a, output y); assign y = (a == 8'hA5); endmodule"
    >>> spec = VerilogSpec("t", "m", (Port("a", "input", 8), Port("y", "output", 1)), None,
    ...                    None, 1, ref, Stimulus(seed=0))
    >>> branch_values(spec)
    {'a': [(165, 255)]}
    """
    widths = {p.name: p.width for p in spec.data_inputs if p.name != spec.reset}
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", spec.reference, flags=re.S)
    found: dict[str, set[tuple[int, int]]] = {}

    def add(name: str, hi: str | None, lo: str | None, value: int, op: str) -> None:
        if name not in widths:
            return
        width = widths[name]
        high = int(hi) if hi is not None else width - 1
        low = int(lo) if lo is not None else (high if hi is not None else 0)
        if not 0 <= low <= high < width:
            return
        span = high - low + 1
        near = (value - 1, value, value + 1) if op in ("<", ">", "<=", ">=") else (value,)
        mask = ((1 << span) - 1) << low
        for v in near:
            if 0 <= v < 1 << span:
                found.setdefault(name, set()).add((v << low, mask))

    for m in _COMPARE.finditer(text):
        name, hi, lo, op = m.group(1), m.group(2), m.group(3), m.group(4)
        add(name, hi, lo, _literal(*m.group(5, 6, 7, 8)), op)
    for m in _COMPARE_REV.finditer(text):
        add(m.group(6), m.group(7), m.group(8), _literal(*m.group(1, 2, 3, 4)), m.group(5))
    for m in _CASE.finditer(text):
        for item in _ITEM.finditer(m.group(2)):
            for lit in re.finditer(_NUMBER, item.group(1)):
                add(m.group(1), None, None, _literal(*lit.groups()), "==")
    return {name: sorted(vals) for name, vals in sorted(found.items())}


def stimulus_vectors(spec: VerilogSpec) -> list[int]:
    """One input vector per cycle (data inputs concatenated in port order, the first port in
    the high bits), reproducible from the stimulus seed."""
    st = spec.stimulus
    rng = random.Random(st.seed)
    ports = spec.data_inputs
    bias = dict(st.bias)
    motifs = dict(st.motifs)
    queued: dict[str, list[int]] = {name: [] for name in motifs}
    branches = branch_values(spec)
    vectors: list[int] = []
    for segment, (start, end) in enumerate(st.bounds()):
        corners = [_corners(p.width) for p in ports] if segment == 0 else []
        long = segment == st.segments
        biased = long or segment % 2 == 1
        pulse_ended = False
        for cycle in range(end - start):
            pulse = not long and cycle > st.reset_cycles and rng.random() < st.reset_rate
            in_reset = spec.reset is not None and (cycle < st.reset_cycles or pulse)
            k = cycle - st.reset_cycles
            for name, q in queued.items():
                if in_reset:
                    q.clear()
                elif not q and rng.random() < (0.6 if k == 0 or pulse_ended else 0.08):
                    q.extend(int(b) for b in rng.choice(motifs[name]))
            pulse_ended = in_reset and cycle >= st.reset_cycles
            vec = 0
            for j, p in enumerate(ports):
                if p.name == spec.reset:
                    v = spec.reset_active if in_reset else 1 - spec.reset_active
                elif corners and 0 <= k < len(corners[j]):
                    v = corners[j][k]
                elif queued.get(p.name):
                    v = queued[p.name].pop(0)
                elif biased and p.name in bias:
                    v = int(rng.random() < bias[p.name])
                elif p.name in branches and rng.random() < BRANCH_RATE:
                    value, mask = rng.choice(branches[p.name])
                    v = value | (rng.getrandbits(p.width) & ~mask)  # other bits random
                else:
                    v = rng.getrandbits(p.width)
                vec = (vec << p.width) | v
            vectors.append(vec)
    return vectors


def stimulus_hex(spec: VerilogSpec, vectors: list[int]) -> str:
    """The vectors as ``$readmemh`` reads them: one hexadecimal word a line."""
    digits = max(1, (spec.input_bits + 3) // 4)
    return "".join(f"{v:0{digits}x}\n" for v in vectors)


def _decl(kind: str, p: Port) -> str:
    rng = f" [{p.width - 1}:0]" if p.width > 1 else ""
    return f"  {kind}{rng} {p.name};\n"


def testbench(spec: VerilogSpec, nonce: str, cycles: int) -> tuple[str, str]:
    """(the testbench module's name, its source) for ``cycles`` cycles, records framed by
    ``nonce`` (letters and digits). It instantiates ``spec.top`` as ``dut``."""
    tb = f"tb_{nonce}"
    stim, i = f"stim_{nonce}", f"i_{nonce}"
    lines = ["`timescale 1ns/1ps\n", f"module {tb};\n"]
    lines += [_decl("reg", p) for p in spec.inputs]
    lines += [_decl("wire", p) for p in spec.outputs]
    width = max(1, spec.input_bits)
    lines.append(f"  reg [{width - 1}:0] {stim} [0:{cycles - 1}];\n")
    lines.append(f"  integer {i};\n")
    conns = ", ".join(f".{p.name}({p.name})" for p in spec.ports)
    lines.append(f"  {spec.top} dut ({conns});\n")
    lines.append("  initial begin\n")
    lines.append(f'    $readmemh("{STIMULUS_FILE}", {stim});\n')
    if spec.clock:
        lines.append(f"    {spec.clock} = 1'b0;\n")
    lines.append(f"    for ({i} = 0; {i} < {cycles}; {i} = {i} + 1) begin\n")
    if spec.data_inputs:
        targets = ", ".join(p.name for p in spec.data_inputs)
        lines.append(f"      {{{targets}}} = {stim}[{i}];\n")
    fmt = " ".join("%b" for _ in spec.outputs)
    outs = ", ".join(p.name for p in spec.outputs)
    lines.append(f'      #{_SETTLE} $display("{nonce} %0d {fmt}", {i}, {outs});\n')
    rest = _PERIOD - _SETTLE
    if spec.clock:
        lines.append(f"      #1 {spec.clock} = 1'b1;\n")
        lines.append(f'      #{rest - 2} $display("{nonce} h%0d {fmt}", {i}, {outs});\n')
        lines.append(f"      #1 {spec.clock} = 1'b0;\n")
    else:
        lines.append(f"      #{rest};\n")
    lines.append("    end\n")
    lines.append(f'    $display("{nonce} END %0d", {i});\n')
    lines.append("    $finish;\n  end\nendmodule\n")
    return tb, "".join(lines)


def parse_records(
    stdout: str, nonce: str, cycles: int, outputs: int, *, phases: int = 1
) -> tuple[list[list[str] | None], bool]:
    """The outputs' bit strings per cycle (None for a cycle with no well-formed record; with
    ``phases`` 2, the clock-low record's then the clock-high one's, None unless both came) and
    whether the end record came with the right count. Lines without the nonce are ignored; a
    cycle recorded twice keeps its first record."""
    halves: list[list[list[str] | None]] = [[None] * cycles for _ in range(phases)]
    ended = False
    for line in stdout.splitlines():
        parts = line.split()
        if not parts or parts[0] != nonce:
            continue
        if len(parts) == 3 and parts[1] == "END":
            ended = parts[2] == str(cycles)
            continue
        tag = parts[1]
        phase = 1 if phases == 2 and tag.startswith("h") else 0
        tag = tag[phase:]
        if len(parts) != outputs + 2 or not tag.isdigit():
            continue
        k = int(tag)
        if 0 <= k < cycles and halves[phase][k] is None:
            halves[phase][k] = parts[2:]
    records: list[list[str] | None] = []
    for k in range(cycles):
        whole: list[str] | None = []
        for half in halves:
            got = half[k]
            whole = None if whole is None or got is None else whole + got
        records.append(whole)
    return records, ended
