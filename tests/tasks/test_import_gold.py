"""Every imported program task's reference solution passes the program verifier (in the
sandbox), source by source: what the importers read as cases, limits and comparison modes is
what a correct program satisfies; and an empty program earns nothing on any of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.tasks.kinds import TaskKind
from referee.tasks.sources import load_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"
FILES = {
    "apps": "apps/test.jsonl",
    "taco": "taco/train.jsonl",
    "codecontests": "codecontests/test.parquet",
    "livecodebench": "livecodebench/test.jsonl",
    "deepcoder": "deepcoder/primeintellect.jsonl",
    "verl": "verl/train.parquet",
}


@pytest.fixture(scope="module")
def verifier(program_sb):
    from referee.verify.program import ProgramVerifier

    return ProgramVerifier(program_sb)


# Sources whose rows carry no solutions (LiveCodeBench, DeepCoder, veRL): gold written here for
# the fixture tasks, in the languages and call forms the imported tasks ask for.
GOLD = {
    "deepcoder/primeintellect-0": ("python", "print(input()[::-1])"),
    "deepcoder/primeintellect-1": ("python", "def inc(x):\n    return x + 1\n"),
    "deepcoder/primeintellect-2": (
        "python",
        "class Solution:\n    def repeat(self, s: str, k: int) -> str:\n        return s * k\n",
    ),
    "livecodebench/abc300_a": (
        "cpp",
        "#include <iostream>\n#include <string>\nint main(){"
        "std::string s; std::cin >> s; std::cout << s << '\\n';}\n",
    ),
    "livecodebench/1": (
        "python",
        "from typing import List\n\nclass Solution:\n"
        "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
        "        seen = {}\n        for i, x in enumerate(nums):\n"
        "            if target - x in seen:\n                return [seen[target - x], i]\n"
        "            seen[x] = i\n",
    ),
    "verl/codecontests-17": (
        "rust",
        "use std::io::*;\nfn main(){let mut s=String::new();"
        "stdin().read_to_string(&mut s).unwrap();let t:i64=s.split_whitespace()"
        '.map(|x|x.parse::<i64>().unwrap()).sum();println!("{}",t);}\n',
    ),
    "verl/apps-3": ("python", "def mul(a, b):\n    return a * b\n"),
    "taco/1": ("python", "def double(x):\n    return 2 * x\n"),  # a TACO row without solutions
}
# Fixture rows that exist to test escaping, with outputs no program derives from the inputs.
NO_GOLD = {"livecodebench/1900B"}


@pytest.mark.parametrize("source", sorted(FILES))
def test_the_references_of_every_imported_task_pass(source, verifier):
    tasks = [t for t in load_source(source, "train", FIXTURES / FILES[source])]
    judged = []
    for t in tasks:
        assert t.kind == TaskKind.PROGRAM
        if t.hidden.get("reference"):
            judged.append((t, t.hidden["reference"]))
        elif t.id in GOLD:
            language, code = GOLD[t.id]
            judged.append((t, {"language": language, "source": code}))
        else:
            assert t.id in NO_GOLD, f"{t.id}: no reference and no gold written for it"
    assert judged, f"{source}: nothing to judge in {FILES[source]}"
    for task, ref in judged:
        verdict = verifier.verify(task, ref["source"], language=ref["language"])
        assert verdict.infra_error is None, (task.id, verdict.infra_error)
        assert verdict.passed, (task.id, [(c.name, c.detail) for c in verdict.tests][:5])
        empty = verifier.verify(task, "", language=ref["language"])
        assert empty.reward == 0.0 and not empty.passed, task.id
