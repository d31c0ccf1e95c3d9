"""The grader's testbench: stimulus drawn on the host, a testbench generated from the port list,
and the per-cycle records it prints read back on the host.

Each cycle the testbench applies one input vector (``$readmemh`` of ``stim.hex``), waits for
combinational logic to settle, prints one record of every output (before the clock's rising
edge, so registered outputs show the state the previous edges made and Mealy outputs the
current inputs), then raises and lowers the clock. Records are framed by a per-run random nonce
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
"""

from __future__ import annotations

import random

from referee.domains.verilog.spec import Port, VerilogSpec

__all__ = ["STIMULUS_FILE", "parse_records", "stimulus_hex", "stimulus_vectors", "testbench"]

STIMULUS_FILE = "stim.hex"
#: Nanoseconds: inputs change at 0, outputs are sampled at 4, the clock rises at 5 and falls
#: at 10 (when the next cycle's inputs change).
_SETTLE, _PERIOD = 4, 10


def _corners(width: int) -> list[int]:
    ones = (1 << width) - 1
    alt = int("01" * width, 2) & ones
    return [0, ones, 1, 1 << (width - 1), alt, ones ^ alt]


def stimulus_vectors(spec: VerilogSpec) -> list[int]:
    """One input vector per cycle (data inputs concatenated in port order, the first port in
    the high bits), reproducible from the stimulus seed."""
    st = spec.stimulus
    rng = random.Random(st.seed)
    ports = spec.data_inputs
    bias = dict(st.bias)
    motifs = dict(st.motifs)
    queued: dict[str, list[int]] = {name: [] for name in motifs}
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
        lines.append(f"      #{rest - 1} {spec.clock} = 1'b0;\n")
    else:
        lines.append(f"      #{rest};\n")
    lines.append("    end\n")
    lines.append(f'    $display("{nonce} END %0d", {i});\n')
    lines.append("    $finish;\n  end\nendmodule\n")
    return tb, "".join(lines)


def parse_records(
    stdout: str, nonce: str, cycles: int, outputs: int
) -> tuple[list[list[str] | None], bool]:
    """The outputs' bit strings per cycle (None for a cycle with no well-formed record) and
    whether the end record came with the right count. Lines without the nonce are ignored;
    a cycle recorded twice keeps its first record."""
    records: list[list[str] | None] = [None] * cycles
    ended = False
    for line in stdout.splitlines():
        parts = line.split()
        if not parts or parts[0] != nonce:
            continue
        if len(parts) == 3 and parts[1] == "END":
            ended = parts[2] == str(cycles)
            continue
        if len(parts) != outputs + 2 or not parts[1].isdigit():
            continue
        k = int(parts[1])
        if 0 <= k < cycles and records[k] is None:
            records[k] = parts[2:]
    return records, ended
