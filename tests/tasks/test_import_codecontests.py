"""CodeContests rows (Parquet) as program tasks: all tests, limits, the reference's language."""

from pathlib import Path

import pytest

from referee.errors import TaskError
from referee.tasks.sources import load_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports" / "codecontests"


def test_codecontests_rows_keep_every_test_limits_and_a_runnable_reference():
    add, mean = load_source("codecontests", "train", FIXTURES / "test.parquet")
    assert [add.id, mean.id] == ["codecontests/1548_A. Sum", "codecontests/p00001 Mean"]
    assert add.provenance.source == "codecontests" and add.payload["io"] == "stdin"
    # Public, private and generated tests are all hidden cases; the public ones are examples.
    assert add.hidden["cases"] == [
        {"input": "2\n1 2\n", "output": "3\n"},
        {"input": "3\n1 1 1\n", "output": "3\n"},
        {"input": "1\n5\n", "output": "5\n"},
    ]
    assert add.payload["examples"] == [{"input": "2\n1 2\n", "output": "3\n"}]
    assert "Example 1\nInput:\n```\n2\n1 2\n```" in add.user_prompt
    assert add.payload["time_limit_s"] == 1.5 and add.payload["memory_mb"] == 256
    # Python 3 is preferred to C++ (language codes 3 and 2).
    assert add.hidden["reference"]["language"] == "python"
    assert add.hidden["reference"]["source"].startswith("input()")
    assert add.difficulty.features == {"cf_rating": 1400.0}
    assert add.difficulty.estimate == pytest.approx(600 / 2700)
    assert add.hidden["compare"] == "tokens"


def test_python2_is_never_the_reference_and_stated_tolerances_compare_as_floats():
    mean = load_source("codecontests", "train", FIXTURES / "test.parquet")[1]
    assert mean.hidden["reference"]["language"] == "java"  # python 2's "print 1" is skipped
    assert mean.hidden["reference"]["source"].startswith("import java.util.*;\npublic class Main")
    assert mean.hidden["compare"] == "float" and mean.hidden["float_tolerance"] == 1e-4
    # No limits in the row (null, 0 bytes): the defaults.
    assert mean.payload["time_limit_s"] == 2.0 and mean.payload["memory_mb"] == 256
    assert mean.difficulty.estimate is None
    assert 'Print "naïve\\path" ≤ 10^9\ttab — and a </s> token' in mean.user_prompt


def test_a_malformed_codecontests_row_names_the_row_and_field():
    with pytest.raises(
        TaskError, match=r"malformed\.parquet: row 2: field 'public_tests': 2 inputs but 1"
    ):
        load_source("codecontests", "train", FIXTURES / "malformed.parquet")
