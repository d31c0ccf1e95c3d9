"""The families: registered under the verilog domain, reproducible from the seed, harder with
difficulty, with the design's structure as the unit; the stimulus follows its plan."""

from __future__ import annotations

from referee.domains import family_names, generate_family
from referee.domains.verilog.spec import verilog_spec
from referee.domains.verilog.testbench import parse_records, stimulus_vectors
from referee.domains.verilog.testbench import testbench as make_testbench

FAMILIES = ["v-arith", "v-comb", "v-counter", "v-fsm", "v-shift"]


def test_the_five_families_are_registered_and_reproducible():
    assert family_names("verilog") == FAMILIES
    for family in FAMILIES:
        a = generate_family(family, count=3, seed=9)
        b = generate_family(family, count=3, seed=9)
        assert [t.content_hash for t in a] == [t.content_hash for t in b]
        assert all(t.kind.value == "verilog" and t.domain == "verilog" for t in a)
        assert all(
            t.provenance.unit and t.provenance.unit.startswith(f"verilog:{family}/") for t in a
        )
        assert [t.difficulty.estimate for t in a] == [0.0, 0.1, 0.2]


def test_difficulty_widens_the_designs():
    easy = generate_family("v-arith", count=4, difficulty=0.0, seed=1)
    hard = generate_family("v-arith", count=4, difficulty=1.0, seed=1)
    width = lambda ts: max(t.difficulty.features["width"] for t in ts)  # noqa: E731
    assert width(hard) > width(easy)


def test_the_stimulus_holds_resets_and_the_long_run():
    task = generate_family("v-counter", count=1, difficulty=0.5, seed=100)[0]
    spec = verilog_spec(task)
    vectors = stimulus_vectors(spec)
    assert len(vectors) == spec.total_cycles == 8 * 32 + spec.stimulus.long_cycles
    assert vectors == stimulus_vectors(spec)
    assert spec.data_inputs[0].name == spec.reset  # the first port: the highest bit
    held = [(v >> (spec.input_bits - 1)) & 1 for v in vectors[:2]]
    assert held == [spec.reset_active] * 2


def test_the_testbench_frames_records_with_its_nonce():
    spec = verilog_spec(generate_family("v-comb", count=1, seed=3)[0])
    name, source = make_testbench(spec, "Nabc123", 4)
    assert name == "tb_Nabc123" and '"Nabc123 %0d' in source and "$finish" in source
    out = "Nabc123 0 1\nforged 1 1\nNabc123 1 0\nNabc123 1 1\nNabc123 END 4\n"
    records, ended = parse_records(out, "Nabc123", 4, 1)
    assert records == [["1"], ["0"], None, None] and ended
