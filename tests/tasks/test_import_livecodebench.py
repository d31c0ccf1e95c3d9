"""LiveCodeBench rows as program tasks; its private cases decoded without running a pickle."""

import base64
import json
import os
import pickle
import zlib
from pathlib import Path

import pytest

from referee.errors import TaskError
from referee.tasks.imports.livecodebench import UnsafePickle, decode_private_cases
from referee.tasks.sources import load_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports" / "livecodebench"


def _encode(obj: object) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(obj))).decode()


def test_livecodebench_rows_keep_public_and_private_cases():
    echo, two_sum, quirky = load_source("livecodebench", "heldout", FIXTURES / "test.jsonl")
    assert [t.id for t in (echo, two_sum, quirky)] == [
        "livecodebench/abc300_a",
        "livecodebench/1",
        "livecodebench/1900B",
    ]
    assert echo.split == "heldout" and echo.provenance.source == "livecodebench"
    assert echo.payload["io"] == "stdin" and echo.payload["examples"] == [
        {"input": "hello\n", "output": "hello\n"}
    ]
    assert echo.hidden["cases"] == [
        {"input": "hello\n", "output": "hello\n"},
        {"input": "x\n", "output": "x\n"},  # decoded from base64 -> zlib -> pickle -> JSON
    ]
    assert echo.user_prompt.startswith("# A. Echo\n\nPrint the string S.")
    assert [t.difficulty.estimate for t in (echo, two_sum, quirky)] == [0.2, 0.5, 0.8]


def test_functional_rows_call_the_solution_method_with_one_argument_a_line():
    two_sum = load_source("livecodebench", "train", FIXTURES / "test.jsonl")[1]
    assert two_sum.payload["io"] == "function" and two_sum.payload["fn_name"] == "twoSum"
    assert two_sum.payload["starter_code"].startswith("class Solution:")
    assert two_sum.hidden["cases"] == [
        {"input": "[[2, 7, 11, 15], 9]", "output": "[0, 1]"},
        {"input": "[[3, 3], 6]", "output": "[0, 1]"},
    ]


def test_escapes_and_plain_json_private_cases():
    quirky = load_source("livecodebench", "train", FIXTURES / "test.jsonl")[2]
    assert quirky.hidden["cases"] == [
        {"input": 'a\\b "c"\n', "output": "naïve\n"},
        {"input": "\t\n", "output": "≤\n"},
    ]
    assert '# Quote "it"' in quirky.user_prompt


def test_a_malicious_pickle_is_refused_and_never_runs(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path}/pwned",))

    with pytest.raises(UnsafePickle, match="system; only plain data"):
        decode_private_cases(_encode(Evil()))
    assert not (tmp_path / "pwned").exists()
    with pytest.raises(TaskError, match=r"malformed\.jsonl:2: field 'private_test_cases': the "):
        load_source("livecodebench", "train", FIXTURES / "malformed.jsonl")


def test_plain_data_pickles_and_garbage_are_told_apart():
    cases = [{"input": "1", "output": "2", "testtype": "stdin"}]
    assert decode_private_cases(_encode(json.dumps(cases))) == cases
    assert decode_private_cases(json.dumps(cases)) == cases
    with pytest.raises(ValueError, match="neither JSON nor base64"):
        decode_private_cases("not base64 !!")
    with pytest.raises(ValueError, match="not zlib data"):
        decode_private_cases(base64.b64encode(b"plain").decode())
