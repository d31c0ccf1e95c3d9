"""Compile and simulate on a leased warm worker: no fresh bubblewrap sandbox per step, a design
that spins is killed and the next sample is still judged, and nothing a sample leaves in the
workspace reaches the next one."""

from __future__ import annotations

import pytest

from referee.domains.verilog.simulate import simulate, verilog_sandbox
from referee.domains.verilog.spec import verilog_spec
from referee.domains.verilog.testbench import stimulus_vectors

from .conftest import HAVE_IVERILOG, NO_IVERILOG
from .test_verifier import COUNTER_REF, counter_task

pytestmark = pytest.mark.skipif(not HAVE_IVERILOG, reason=NO_IVERILOG)

SPIN = COUNTER_REF.replace("endmodule", "reg r;\ninitial forever begin end\nendmodule")
#: A design that leaves a file in the workspace (the static check would refuse $fopen; here the
#: simulation is called directly, below that check, to see what the workspace keeps).
LITTER = COUNTER_REF.replace(
    "endmodule", 'integer f;\ninitial begin f = $fopen("left.txt", "w"); $fclose(f); end\nendmodule'
)


@pytest.fixture(scope="module")
def box():
    # One worker: every sample leases the same one, so what one leaves the next would see.
    sb = verilog_sandbox(python_workers=1)
    yield sb
    sb.close()


def _sim(box, design: str, nonce: str):  # type: ignore[no-untyped-def]
    spec = verilog_spec(counter_task())
    return spec, simulate(box, spec, design, nonce=nonce, vectors=stimulus_vectors(spec))


def test_both_steps_run_on_the_warm_worker_not_a_fresh_sandbox(box, monkeypatch):
    def fresh(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a fresh bubblewrap sandbox was started")

    monkeypatch.setattr(box, "run", fresh)
    spec, sim = _sim(box, COUNTER_REF, "Nwarm1")
    assert sim.ended and not sim.failure and all(r is not None for r in sim.records)
    assert len(sim.records) == spec.total_cycles


def test_a_spinning_design_is_killed_and_the_next_sample_is_still_judged(box):
    _, spun = _sim(box, SPIN, "Nspin1")
    assert spun.timed_out and spun.failure.startswith("time limit")
    _, after = _sim(box, COUNTER_REF, "Nafter1")
    assert after.ended and not after.failure and all(r is not None for r in after.records)


def test_what_a_sample_leaves_in_the_workspace_is_gone_for_the_next(box):
    _, littered = _sim(box, LITTER, "Nlitter1")
    assert littered.ended and not littered.failure
    with box.lease() as lease:  # the only worker: the one the sample ran on
        assert lease.workspace.read_all() == {}


@pytest.mark.filterwarnings("ignore::referee.sandbox.local.UnsafeBackendWarning")
def test_the_local_backend_runs_both_steps_too():
    from referee.sandbox import Sandbox

    with Sandbox(backend="local", toolchains=("verilog",)) as sb:
        _, sim = _sim(sb, COUNTER_REF, "Nlocal1")
    assert sim.ended and not sim.failure
