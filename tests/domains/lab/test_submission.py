"""A submission is a law the task offers with its parameters, and nothing else."""

import json

import pytest

from referee.domains.lab.kinetics import KINETICS
from referee.domains.lab.submission import Model, SubmissionError, read_submission

OFFERED = ["power-law", "saturable"]
GOOD = {"law": "power-law", "params": {"k_ref": 0.05, "n": 1, "Ea_kJ": 50}}


def test_a_model_reads_from_json_a_fenced_block_or_the_last_of_several():
    want = Model("power-law", {"k_ref": 0.05, "n": 1.0, "Ea_kJ": 50.0})
    assert read_submission(json.dumps(GOOD), KINETICS, OFFERED) == want
    text = f"My fit:\n```json\n{json.dumps(GOOD)}\n```\nDone."
    assert read_submission(text, KINETICS, OFFERED) == want
    first = {"law": "saturable", "params": {"vmax_ref": 0.1, "Km": 1.0, "Ea_kJ": 40}}
    two = f"```json\n{json.dumps(first)}\n```\nBetter:\n```json\n{json.dumps(GOOD)}\n```"
    assert read_submission(two, KINETICS, OFFERED) == want


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "nothing was submitted"),
        ("k is about 0.05", "not JSON"),
        ("[1, 2]", "keys law and params only"),
        (json.dumps({**GOOD, "predictions": [1]}), "keys law and params only"),
        (json.dumps({"law": "table", "params": {}}), "law must be one of power-law, saturable"),
        (json.dumps({"law": "power-law", "params": {"k_ref": 0.05}}), "must be exactly"),
        (json.dumps({"law": "power-law", "params": {**GOOD["params"], "x": 1}}), "must be exactly"),
        (
            json.dumps({"law": "power-law", "params": {**GOOD["params"], "n": "1"}}),
            "n must be a number",
        ),
        (
            json.dumps({"law": "power-law", "params": {**GOOD["params"], "n": True}}),
            "n must be a number",
        ),
        (
            '{"law": "power-law", "params": {"k_ref": NaN, "n": 1, "Ea_kJ": 5}}',
            "NaN is not a number",
        ),
        (
            '{"law": "power-law", "params": {"k_ref": 1e999, "n": 1, "Ea_kJ": 5}}',
            "k_ref must be a finite",
        ),
        (
            '{"law": "power-law", "params": {"k_ref": 1' + "0" * 500 + ', "n": 1, "Ea_kJ": 5}}',
            "finite",
        ),
        (
            json.dumps({"law": "power-law", "params": {**GOOD["params"], "n": 3.5}}),
            "n must be between 0 and 3",
        ),
        ("[" * 3000 + "]" * 3000, "a model fits in 4000"),
        ("[" * 1900 + "]" * 1900, "not JSON (RecursionError)"),
        (json.dumps(GOOD) + " " * 5000, "a model fits in 4000"),
    ],
)
def test_what_is_not_a_model_is_refused_with_its_reason(text, why):
    with pytest.raises(SubmissionError, match=None) as info:
        read_submission(text, KINETICS, OFFERED)
    assert why in str(info.value) and "\n" not in str(info.value)


def test_a_law_the_task_does_not_offer_is_refused():
    saturable = {"law": "saturable", "params": {"vmax_ref": 0.1, "Km": 1.0, "Ea_kJ": 40}}
    with pytest.raises(SubmissionError, match="law must be one of power-law"):
        read_submission(json.dumps(saturable), KINETICS, ["power-law"])
