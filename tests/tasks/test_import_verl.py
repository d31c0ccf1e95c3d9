"""veRL Parquet rows of code data sources as program tasks, with their own prompts."""

from pathlib import Path

import pytest

from referee.errors import TaskError
from referee.tasks.sources import load_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports" / "verl"


def test_verl_rows_keep_their_messages_and_become_cases():
    cc, apps = load_source("verl", "train", FIXTURES / "train.parquet")
    assert [cc.id, apps.id] == ["verl/codecontests-17", "verl/apps-3"]
    assert cc.provenance.source == "verl"
    assert [m.role for m in cc.prompt] == ["system", "user"]
    assert cc.user_prompt == "Print a + b.\n```python\n# your code\n```"
    assert cc.payload["io"] == "stdin" and cc.hidden["cases"] == [
        {"input": "1 2\n", "output": "3\n"}
    ]
    assert apps.payload["fn_name"] == "mul" and apps.payload["languages"] == ["python"]
    assert apps.hidden["cases"] == [{"input": "[2, 3]", "output": "6"}]
    assert apps.user_prompt == "Write mul(a, b) — returns a \u00d7 b."


def test_a_row_of_another_data_source_is_refused_by_row_and_field():
    with pytest.raises(
        TaskError,
        match=r"malformed\.parquet: row 2: field 'reward_model\.ground_truth': data_source "
        "'openai/gsm8k'",
    ):
        load_source("verl", "train", FIXTURES / "malformed.parquet")
