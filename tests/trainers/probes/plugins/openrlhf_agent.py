"""An OpenRLHF agent file for the probe (`--train.agent_func_path` takes a .py path; OpenRLHF
loads `AgentExecutor` from it and calls `AgentExecutor()`)."""

import torch
from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor


class AgentInstance(AgentInstanceBase):
    def __init__(self, *args, **kwargs):
        self.turns = 0

    async def reset(self, states: dict, **kwargs):
        return {"observation": states["observation"]}

    async def step(self, states: dict, **kwargs):
        self.turns += 1
        ok = "return a + b" in states["action_text"]
        done = ok or self.turns >= 2
        return {
            "rewards": torch.tensor(float(ok)),
            "scores": torch.tensor(float(ok)),
            "environment_feedback": "" if done else "\nuser: tests failed, try again\nassistant: ",
            "done": done,
            "sampling_params": states.get("sampling_params"),
            "extra_logs": {"turns": torch.tensor(float(self.turns))},
        }


class AgentExecutor(MultiTurnAgentExecutor):
    def __init__(self):
        super().__init__(AgentInstance)
