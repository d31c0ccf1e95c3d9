"""The red-team corpus: every exploit scores no more than the empty answer and never passes."""

from __future__ import annotations

from referee.domains.dataframe.redteam import EXPLOITS, run_exploits
from referee.domains.dataframe.verifier import DataframeVerifier
from referee.tasks.model import Task


def test_every_exploit_is_held(hostile_verifier: DataframeVerifier, df_tasks: dict[str, Task]):
    outcomes = run_exploits(hostile_verifier.verify, [df_tasks["df-join-aggregate"]])
    assert len(outcomes) == len(EXPLOITS)
    leaks = [(o.name, o.reward, o.baseline) for o in outcomes if not o.held]
    assert not leaks, leaks
    flagged = {o.name.split(" on ")[0] for o in outcomes if o.flags}
    assert {"exit-with-success-print", "lying-dataframe-subclass"} <= flagged
    forged = next(o for o in outcomes if o.name.startswith("forge-input-error"))
    assert "forged-infra-error" in forged.flags and "infra-error" not in forged.flags


def test_the_hardcoded_sample_output_passes_the_sample_but_not_the_hidden_sets(
    df_verifier: DataframeVerifier, df_tasks: dict[str, Task]
):
    task = df_tasks["df-pivot"]
    hardcoded = EXPLOITS[0].make(task)
    # Judged on the visible sample alone, the hard-coded answer would pass...
    sample = task.revised(
        hidden={
            **task.hidden,
            "instances": [
                {
                    "inputs": task.payload["visible"],
                    "expected": task.payload["visible_output"],
                    "facts": {},
                }
            ],
        }
    )
    assert df_verifier.verify(sample, hardcoded).passed
    # ...on the hidden sets it earns nothing.
    assert df_verifier.verify(task, hardcoded).reward == 0.0
