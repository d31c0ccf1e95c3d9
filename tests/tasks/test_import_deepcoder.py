"""DeepCoder rows as program tasks: both test layouts, the subset in the id."""

from pathlib import Path

import pytest

from referee.errors import ConfigError, TaskError
from referee.tasks.imports.deepcoder import subset_of
from referee.tasks.sources import load_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports" / "deepcoder"


def test_deepcoder_rows_take_the_subset_and_index_as_their_id():
    rev, inc, rep = load_source("deepcoder", "train", FIXTURES / "primeintellect.jsonl")
    assert [t.id for t in (rev, inc, rep)] == [
        "deepcoder/primeintellect-0",
        "deepcoder/primeintellect-1",
        "deepcoder/primeintellect-2",
    ]
    assert rev.provenance.source == "deepcoder"
    assert rev.payload["io"] == "stdin"
    assert rev.hidden["cases"] == [{"input": "abc\n", "output": "cba\n"}]  # type stdin_stdout
    # The TACO-style dict, with its wrapped outputs unwrapped as for APPS.
    assert inc.payload["fn_name"] == "inc"
    assert inc.hidden["cases"] == [{"input": "[1]", "output": "2"}, {"input": "[2]", "output": "3"}]
    # LiveCodeBench-style functional cases; func_name from metadata; escapes kept.
    assert rep.payload["io"] == "function" and rep.payload["fn_name"] == "repeat"
    assert rep.hidden["cases"] == [{"input": '["a\\\\b", 2]', "output": '"a\\\\ba\\\\b"'}]
    named = load_source("deepcoder", "train", FIXTURES / "primeintellect.jsonl", subset="pi")
    assert named[0].id == "deepcoder/pi-0"


def test_the_subset_comes_from_the_file_or_its_folder():
    assert subset_of("data/lcbv5.jsonl") == "lcbv5"
    assert subset_of("taco/train-00000-of-00001.parquet") == "taco"
    with pytest.raises(ConfigError, match="one word"):
        load_source("deepcoder", "train", FIXTURES / "primeintellect.jsonl", subset="a/b")


def test_a_malformed_deepcoder_row_names_the_line_and_field():
    with pytest.raises(TaskError, match=r"malformed\.jsonl:3: field 'tests': not valid JSON"):
        load_source("deepcoder", "train", FIXTURES / "malformed.jsonl")
