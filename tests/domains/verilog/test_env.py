"""The verilog environment end to end: a scripted multi-turn episode through RolloutRunner
(interface, compile with a bug, simulate with its own testbench, submit), snapshots, and
answers given as text."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from referee.domains.verilog.env import VerilogEnv
from referee.envs import make_env
from referee.policy import ScriptedPolicy
from referee.rollout import RolloutRunner

from .test_verifier import COUNTER_REF, counter_task

TB = """module my_tb;
  reg clk = 0, rst = 1, en = 1; wire [3:0] q;
  cnt dut(.clk(clk), .rst(rst), .en(en), .q(q));
  always #5 clk = ~clk;
  initial begin #12 rst = 0; #40 $display("q=%0d", q); $finish; end
endmodule
"""


def call(name: str, **args: Any) -> dict[str, Any]:
    fn = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": name, "type": "function", "function": fn}],
    }


def test_a_scripted_episode_compiles_simulates_and_submits(verifier):
    task = counter_task()
    script = [
        call("interface"),
        call("compile", source=COUNTER_REF.replace("q + 4'd1", "q +")),
        call("compile", source=COUNTER_REF.replace("endmodule", "initial $finish;\nendmodule")),
        call("simulate", source=COUNTER_REF, testbench=TB),
        call("submit", source=f"```verilog\n{COUNTER_REF}```"),
    ]
    runner = RolloutRunner(
        lambda: VerilogEnv(verifier=verifier), ScriptedPolicy(script), max_infra_retries=0
    )
    [traj] = runner.run_sync([task])
    assert traj.error is None, traj.error
    assert traj.end_reason == "submitted" and traj.reward == 1.0
    seen = [t.observations[0]["content"] for t in traj.turns]
    assert "module cnt(input clk" in seen[0] and "$finish" in seen[0]
    assert seen[1].startswith("compile failed") and "design.v" in seen[1]
    assert "the grader would reject it: system task $finish" in seen[2]
    assert "q=4" in seen[3]


def test_a_text_answer_submits_and_snapshots_restore(verifier):
    async def episode() -> tuple[float, float]:
        env = make_env("verilog", verifier=verifier)
        await env.reset(counter_task())
        first = await env.step({"role": "assistant", "content": "Let me think."})
        assert not first.done and "```verilog" in first.observations[0]["content"]
        snap = await env.snapshot()
        wrong = await env.step(
            {"role": "assistant", "content": "```verilog\nmodule cnt; endmodule\n```"}
        )
        assert wrong.done and wrong.reason == "answered"
        low = (await env.verify()).reward
        await env.restore(snap)
        assert not env.done
        await env.step({"role": "assistant", "content": f"```verilog\n{COUNTER_REF}```"})
        high = (await env.verify()).reward
        await env.close()
        return low, high

    assert asyncio.run(episode()) == (0.0, 1.0)
