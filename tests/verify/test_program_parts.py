"""The program verifier's pure parts: answers and their language, comparison modes, the task
schema, samples with a language. Nothing here runs a program."""

from __future__ import annotations

import json

import pytest

from referee.envs.answers import program_answer
from referee.errors import VerifierError
from referee.tasks.model import Task
from referee.verify.program.answer import AnswerError, parse_answer, with_language
from referee.verify.program.build import java_names
from referee.verify.program.compare import compare
from referee.verify.program.spec import input_key, program_spec
from referee.verify.samples import gold_samples, read_samples


@pytest.mark.parametrize(
    ("tag", "language"),
    [
        ("cpp", "cpp"),
        ("c++", "cpp"),
        ("C", "c"),
        ("py", "python"),
        ("python3", "python"),
        ("java", "java"),
        ("js", "javascript"),
        ("javascript", "javascript"),
        ("golang", "go"),
        ("go", "go"),
        ("rs", "rust"),
        ("rust", "rust"),
    ],
)
def test_the_last_block_tagged_with_a_language_is_the_answer(tag, language):
    # Scratch work first, the answer, then an example output in a ```text block.
    text = (
        f"Some prose.\n```python\nnot this\n```\nSo:\n```{tag}\ncode here\n```\n"
        "It prints:\n```text\n3\n```\n"
    )
    answer = parse_answer(text)
    assert answer.language == language and answer.code == "code here\n"
    # The same block as the environments' reading of the text (referee.envs.answers).
    assert parse_answer(program_answer(text)) == answer


def test_the_sample_language_wins_and_bare_code_is_python():
    assert parse_answer("```c\nint main(){}\n```", language="cpp").language == "cpp"
    assert parse_answer("print(1)\n").code == "print(1)\n"
    assert parse_answer("```go\npackage main\n").code == "package main\n"  # unclosed fence


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        ("```\nx\n```", {}, "no language tag"),
        ("```cobol\nx\n```", {}, "unknown language 'cobol'"),
        ("x", {"language": "fortran"}, "unknown language 'fortran'"),
        ("print(1)", {"allowed": ["cpp"]}, "does not accept Python"),
        ("```java\nx\n```", {"allowed": ["cpp", "c"]}, "'java' is not allowed"),
        ("```cpp\n\n```", {}, "no code"),
    ],
)
def test_a_missing_or_unknown_language_is_a_clear_error(text, kwargs, message):
    with pytest.raises(AnswerError, match=message):
        parse_answer(text, **kwargs)


def test_with_language_keeps_code_holding_fences():
    code = 'fn main(){ let s = "```"; }\n'
    answer = parse_answer(with_language(f"prose\n```\n{code}```", "rs"))
    assert answer.language == "rust"
    assert parse_answer(with_language(code, "rust")).code == code


def test_java_file_and_main_class():
    assert java_names("public class Main { public static void main(String[] a){} }") == (
        "Main.java",
        "Main",
    )
    assert java_names("class A {}\nclass Sol { public static void main(String[] a){} }") == (
        "Main.java",
        "Sol",
    )
    assert java_names("package p;\npublic class B { static public void main(String[] a){} }") == (
        "B.java",
        "p.B",
    )


@pytest.mark.parametrize(
    ("mode", "output", "expected", "ok"),
    [
        ("tokens", "1  2\n3\n\n", "1 2 3", True),
        ("tokens", "1 2", "1 2 3", False),
        ("tokens", "", "0", False),
        ("exact", "a b\r\nc\n\n", "a b\nc", True),
        ("exact", "a  b\nc", "a b\nc", False),
        ("float", "0.3333334 2", "0.333333 2", True),
        ("float", "1000000.5", "1000000", True),  # relative
        ("float", "0.34", "0.333333", False),
        ("float", "nan", "0.5", False),
        ("float", "inf", "1e308", False),
        ("float", "YES 1.0", "YES 1", True),
        ("float", "NO 1.0", "YES 1", False),
    ],
)
def test_comparison_modes(mode, output, expected, ok):
    assert compare(mode, output, expected, tolerance=1e-6)[0] is ok


def test_a_wrong_answers_reason_never_quotes_the_expected_output():
    ok, why = compare("tokens", "1 2 4", "1 2 SECRET")
    assert not ok and "SECRET" not in why and "token 3" in why


def _task(**hidden_and_payload):
    payload = {"io": "stdin", **hidden_and_payload.pop("payload", {})}
    return Task.create(
        name="t/p-v1", prompt="p", kind="program", payload=payload, hidden=hidden_and_payload
    )


def test_spec_defaults_and_per_case_limits():
    spec = program_spec(
        _task(
            cases=[{"input": "1", "output": "1"}, {"input": "2", "output": "2", "time_limit_s": 5}],
            payload={"memory_mb": 64},
        )
    )
    assert spec.compare == "tokens" and spec.tolerance == 1e-6 and len(spec.languages) == 7
    assert [(c.time_limit_s, c.memory_mb) for c in spec.cases] == [(2.0, 64), (5.0, 64)]


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (_task(cases=[]), "non-empty"),
        (_task(cases=[{"input": 1, "output": "x"}]), "case 0 needs 'input'"),
        (_task(cases=[{"input": "1", "output": "1"}], compare="regex"), "compare must be"),
        (_task(cases=[{"input": "1", "output": "1"}], compare="checker"), "hidden.checker"),
        (_task(cases=[{"input": "1", "output": "1"}], payload={"io": "function"}), "fn_name"),
        (_task(cases=[{"input": "1", "output": "1"}], payload={"languages": ["cobol"]}), "langu"),
        (_task(cases=[{"input": "1", "output": "1"}], payload={"time_limit_s": -1}), "positive"),
    ],
)
def test_a_malformed_task_names_its_field(task, message):
    with pytest.raises(VerifierError, match=message):
        program_spec(task)


def test_samples_carry_a_language_for_program_tasks(tmp_path):
    task = _task(
        cases=[{"input": "1", "output": "1"}],
        reference={"language": "cpp", "source": "int main(){}\n"},
    )
    gold = list(gold_samples([task]))
    assert gold == [{"task_id": "t/p-v1", "completion": "int main(){}\n", "language": "cpp"}]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in gold) + "\n")
    [(_t, completion)] = read_samples(path, [task])
    assert parse_answer(completion).language == "cpp"
    assert parse_answer(completion).code == "int main(){}\n"


def test_an_example_is_recognised_among_the_cases_by_its_tokens():
    # Same tokens, other spacing and line ends: one input to any program reading tokens.
    assert input_key("3\n1 2 3\n") == input_key(" 3\r\n1\t 2  3\r\n\r\n") == "3 1 2 3"
    assert input_key("3\n1 2 3") != input_key("3\n1 2 4")
    # Function arguments compare as canonical JSON, whatever their spacing or key order.
    assert input_key('[1, {"b": 2, "a": 1}]', "function") == input_key(
        '[1,{"a":1,"b":2}]', "function"
    )
    task = Task.create(
        name="t/examples-v1",
        prompt="p",
        kind="program",
        answer_format="code",
        payload={"io": "stdin", "examples": [{"input": "2\n1 1\n", "output": "2\n"}]},
        hidden={
            "cases": [
                {"input": "2\n1   1", "output": "2\n"},
                {"input": "2\n1 2\n", "output": "3\n"},
            ],
            "compare": "tokens",
        },
    )
    assert [c.example for c in program_spec(task).cases] == [True, False]
