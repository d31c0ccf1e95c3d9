"""APPS and TACO rows as program tasks: ids, cases, function calls, the wrapped outputs, limits."""

import json
from pathlib import Path

import pytest

from referee.errors import TaskError
from referee.tasks.imports.program import compare_for
from referee.tasks.kinds import TaskKind
from referee.tasks.sources import iter_source, load_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"


def test_apps_rows_become_program_tasks_with_their_ids_cases_and_references():
    stdin, call, quirky = load_source("apps", "train", FIXTURES / "apps" / "test.jsonl")
    assert [t.id for t in (stdin, call, quirky)] == ["apps/4000", "apps/4001", "apps/4002"]
    assert stdin.kind is TaskKind.PROGRAM and stdin.answer_format == "code"
    assert stdin.split == "train" and stdin.provenance.source == "apps"
    assert stdin.payload == {
        "io": "stdin",
        "fn_name": None,
        "starter_code": "",
        "examples": [],
        "languages": None,
        "time_limit_s": 2.0,
        "memory_mb": 256,
    }
    assert stdin.hidden["cases"] == [
        {"input": "1 2\n", "output": "3\n"},
        {"input": "10 -3\n", "output": "7\n"},
    ]
    assert stdin.hidden["compare"] == "tokens"
    assert stdin.hidden["reference"] == {
        "language": "python",
        "source": "a, b = map(int, input().split())\nprint(a + b)\n",
    }
    assert stdin.difficulty.estimate == 0.2 and call.difficulty.estimate == 0.5
    assert "Given two integers a and b" in stdin.user_prompt
    assert "standard input" in stdin.user_prompt
    stdin.verify_hash()


def test_apps_function_rows_call_fn_name_with_argument_lists_and_unwrap_wrapped_outputs():
    _, call, quirky = load_source("apps", "heldout", FIXTURES / "apps" / "test.jsonl")
    assert call.payload["io"] == "function" and call.payload["fn_name"] == "add_pair"
    assert call.payload["languages"] == ["python"]
    assert call.payload["starter_code"] == "def add_pair(a, b):\n\t"
    # APPS stores return values 3 and 7 as [3] and [7]: every one wrapped, so unwrapped.
    assert call.hidden["cases"] == [
        {"input": "[1, 2]", "output": "3"},
        {"input": "[3, 4]", "output": "7"},
    ]
    assert "defines `add_pair`" in call.user_prompt and "def add_pair(a, b):" in call.user_prompt
    # Not every output a one-element list: the return values are kept as they are.
    assert [json.loads(c["output"]) for c in quirky.hidden["cases"]] == [["a", "b"], ["c"], []]
    assert [json.loads(c["input"]) for c in quirky.hidden["cases"]] == [["a b"], ["c"], [""]]


def test_apps_special_characters_survive_the_prompt():
    quirky = load_source("apps", "train", FIXTURES / "apps" / "test.jsonl")[2]
    assert 'Print "naïve\\path" ≤ 10^9\ttab — and a </s> token' in quirky.user_prompt


def test_a_malformed_apps_row_names_the_file_line_and_field():
    path = FIXTURES / "apps" / "malformed.jsonl"
    with pytest.raises(
        TaskError, match=r"malformed\.jsonl:2: field 'input_output': not valid JSON"
    ):
        load_source("apps", "train", path)


def test_taco_rows_without_ids_take_their_index_and_their_limits():
    stdin, call = load_source("taco", "train", FIXTURES / "taco" / "train.jsonl")
    assert [stdin.id, call.id] == ["taco/0", "taco/1"]
    assert stdin.provenance.source == "taco"
    # TACO's stdin cases as lists of lines: joined into the text a program reads.
    assert stdin.hidden["cases"] == [
        {"input": "3\n", "output": "9\n"},
        {"input": "4\n", "output": "16\n"},
    ]
    assert stdin.payload["time_limit_s"] == 2.5 and stdin.payload["memory_mb"] == 64
    assert stdin.difficulty.estimate == 0.65  # MEDIUM_HARD
    # Outputs not wrapped (4, -2): taken as they are; "None" limits are the defaults.
    assert call.hidden["cases"] == [
        {"input": "[2]", "output": "4"},
        {"input": "[-1]", "output": "-2"},
    ]
    assert call.payload["time_limit_s"] == 2.0 and call.hidden["reference"] is None


def test_a_malformed_taco_row_names_the_field():
    with pytest.raises(TaskError, match=r"malformed\.jsonl:3: field 'input_output': 1 inputs"):
        load_source("taco", "train", FIXTURES / "taco" / "malformed.jsonl")


def test_a_missing_file_and_a_non_object_line_are_named(tmp_path):
    with pytest.raises(TaskError, match="no such file"):
        load_source("apps", "train", tmp_path / "nope.jsonl")
    (tmp_path / "a.jsonl").write_text('{"problem_id": 1, "question": "q"}\n"text"\n')
    with pytest.raises(TaskError, match=r"a\.jsonl:1: field 'input_output': missing"):
        load_source("apps", "train", tmp_path / "a.jsonl")
    (tmp_path / "a.jsonl").write_text('\n"text"\n')
    with pytest.raises(TaskError, match=r"a\.jsonl:2: expected a JSON object, got a string"):
        load_source("apps", "train", tmp_path / "a.jsonl")
    (tmp_path / "b.jsonl").write_text('{"problem_id": 1}\n')
    with pytest.raises(TaskError, match=r"b\.jsonl:1: field 'question': missing"):
        load_source("apps", "train", tmp_path / "b.jsonl")


def test_a_json_array_file_reads_as_rows(tmp_path):
    rows = [json.loads(x) for x in (FIXTURES / "apps" / "test.jsonl").read_text().splitlines()]
    (tmp_path / "apps.json").write_text(json.dumps(rows, indent=1))
    assert [t.id for t in load_source("apps", "train", tmp_path / "apps.json")] == [
        "apps/4000",
        "apps/4001",
        "apps/4002",
    ]


def test_rows_stream_one_at_a_time():
    tasks = iter_source("apps", "train", FIXTURES / "apps" / "malformed.jsonl")
    assert next(tasks).id == "apps/4000"  # the first row, before the malformed second is read
    with pytest.raises(TaskError, match=r":2: field 'input_output'"):
        next(tasks)


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("Print the sum.", ("tokens", None)),
        ("An absolute or relative error of at most 10^{-9} is accepted.", ("float", 1e-9)),
        ("Answers within 1e-4 relative error are accepted.", ("float", 1e-4)),
        ("Your answer's absolute error must be small.", ("float", 1e-6)),
        ("x" * 500 + " absolute or relative error not exceeding 10^-7", ("float", 1e-7)),
    ],
)
def test_stated_tolerances_make_float_comparisons(statement, expected):
    assert compare_for(statement) == expected
