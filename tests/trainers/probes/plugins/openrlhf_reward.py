"""An OpenRLHF reward file for the probe (`--reward.remote_url path.py`: `reward_func(queries,
prompts, labels)`, called in a thread with lists of one)."""

import torch


def reward_func(queries, prompts, labels):
    # queries are prompt + response, decoded with skip_special_tokens=False
    r = [float("return a + b" in q[len(p) :]) for q, p in zip(queries, prompts, strict=False)]
    return {"rewards": torch.tensor(r), "scores": torch.tensor(r), "extra_logs": {"labels": labels}}
