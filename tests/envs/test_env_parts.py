"""The pieces of the environments, without a sandbox: answers, diffs, tool calls, budgets."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from referee.envs import EpisodeLimits, env_names, make_env, register_env
from referee.envs.answers import extract_code, extract_diff, to_completion
from referee.envs.budget import Budget, completion_tokens
from referee.envs.patch import files_diff
from referee.envs.tools import check_arguments, function_tool, parse_tool_calls
from referee.errors import ConfigError

PROMPT = "from typing import List\n\n\ndef solve(xs: List[int]) -> int:\n    'Sum.'\n"


@pytest.mark.parametrize(
    "answer",
    [
        "    return sum(xs)\n",  # the body
        "return sum(xs)",  # the body, flush left
        PROMPT + "    return sum(xs)\n",  # the prompt repeated
        "\n" + PROMPT.strip() + "\n    return sum(xs)",  # repeated, blank lines around
        "def solve(xs):\n    return sum(xs)\n",  # the function again
        "import math\n\ndef helper(x):\n    return x\n\ndef solve(xs):\n    return sum(map(helper, xs))",
    ],
)
def test_every_answer_shape_becomes_a_working_completion(answer):
    namespace: dict[str, object] = {}
    exec(PROMPT + to_completion(PROMPT, answer, "solve"), namespace)
    assert namespace["solve"]([1, 2, 3]) == 6  # type: ignore[operator]


def test_extract_code_prefers_the_last_python_block():
    text = "```python\nfirst\n```\ntext\n```python\nsecond\n```"
    assert extract_code(text) == "second\n"
    assert extract_code("no fence") == "no fence"
    assert extract_code("no fence", require_fence=True) is None
    assert extract_code("```python\nunterminated") == "unterminated"
    assert extract_code("```\nbare\n```") == "bare\n"


def test_extract_diff_finds_fenced_and_bare_diffs():
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert extract_diff(f"Fix:\n```diff\n{diff}```\nbye") == diff
    assert extract_diff(f"Fix:\n{diff}") == diff
    assert extract_diff("--- just a rule\nno diff") is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_files_diff_applies_with_git(tmp_path):
    before = {
        "keep.py": b"same\n",
        "edit.py": b"a\nb\nc\n",
        "gone.py": b"bye\n",
        "tail.py": b"no newline",
        "empty.py": b"x\n",
        "blob.bin": b"\xff\xfe",
    }
    after = {
        "keep.py": b"same\n",
        "edit.py": b"a\nB\nc\n",
        "tail.py": b"no newline either",
        "new/dir/mod.py": "made\n",
        "empty.py": b"",
        "blank.txt": b"",
        "pkg/__pycache__/x.cpython-311.pyc": b"\x00junk",
        "blob.bin": b"\xff\xfd",
    }
    patch, skipped = files_diff(before, after)
    assert skipped == ["blob.bin"] and "__pycache__" not in patch
    for name, data in before.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    r = subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + patch
    (tmp_path / "p.diff").unlink()
    got = {
        str(p.relative_to(tmp_path)): p.read_bytes()
        for p in tmp_path.rglob("*")
        if p.is_file() and ".git" not in p.parts
    }
    wanted = {k: v if isinstance(v, bytes) else v.encode() for k, v in after.items()}
    wanted = {k: v for k, v in wanted.items() if "__pycache__" not in k}
    wanted["blob.bin"] = before["blob.bin"]  # binary files are left out of the diff
    assert got == wanted


def test_parse_tool_calls_never_raises():
    msg = {
        "tool_calls": [
            {"id": "1", "function": {"name": "f", "arguments": '{"a": 1}'}},
            {"id": "2", "function": {"name": "f", "arguments": {"a": 2}}},  # decoded already
            {"id": "3", "function": {"name": "f", "arguments": "[1]"}},
            {"function": {"name": "f"}},  # no id, no arguments
            "junk",
        ]
    }
    calls = parse_tool_calls(msg)
    assert [(c.id, c.arguments, bool(c.error)) for c in calls] == [
        ("1", {"a": 1}, False),
        ("2", {"a": 2}, False),
        ("3", {}, True),
        ("call_3", {}, False),
        ("call_4", {}, True),
    ]
    assert parse_tool_calls({"content": "hi"}) == []


def test_check_arguments():
    schema = function_tool(
        "f", "", {"n": {"type": "integer"}, "xs": {"type": "array", "items": {"type": "string"}}}
    )
    call = parse_tool_calls({"tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]})[0]
    assert "missing" in check_arguments(call, schema)
    for args, problem in (
        ({"n": 1, "xs": ["a"]}, ""),
        ({"n": True, "xs": []}, "type integer"),
        ({"n": 1, "xs": [1]}, "list of strings"),
        ({"n": 1, "xs": [], "z": 0}, "unknown"),
    ):
        c = type(call)(id="x", name="f", arguments=args)
        assert problem in check_arguments(c, schema) and bool(problem) == bool(
            check_arguments(c, schema)
        )


def test_budget_counts_and_reports_limits():
    b = Budget(EpisodeLimits(max_turns=3, max_tokens=50, episode_timeout_s=60))
    assert completion_tokens({"content": "abcdefgh"}) == 2
    assert completion_tokens({"content": None, "completion_tokens": 9}) == 9
    call = {"function": {"name": "write_file", "arguments": "x" * 30}}
    assert completion_tokens({"content": "", "tool_calls": [call]}) == 10
    b.charge({"content": "x" * 200})
    assert b.exceeded() == "max_tokens"
    state = b.state()
    b.start()
    assert b.turns == 0 and b.exceeded() == ""
    b.restore(state)
    assert b.tokens == 50 and b.exceeded() == "max_tokens"
    assert Budget(EpisodeLimits(episode_timeout_s=1e-9)).exceeded() == "timeout"


def test_registry_rejects_duplicates_and_takes_new_names():
    with pytest.raises(ConfigError, match="registered already"):
        register_env("code", lambda **kw: make_env("code", **kw))
    register_env("test-alias", lambda **kw: make_env("code-single", **kw), replace=True)
    assert "test-alias" in env_names()
    with pytest.raises(ConfigError, match="single-turn"):
        make_env("code-single", single_turn=False)
