"""The program verifier's features, for real in the sandbox: float tolerance, exact output,
checkers (Python and C++), function io, the warm and fresh paths, dispatch, and what the
candidate can see."""

from __future__ import annotations

import pytest

from referee.tasks.model import Task
from referee.verify.dispatch import VerifierSet, count_tests
from referee.verify.program import ProgramVerifier
from referee.verify.program.build import Build, build_program
from referee.verify.program.execute import case_limits, run_build


def program_task(name, cases, payload=None, **hidden):
    return Task.create(
        name=f"test/{name}-v1",
        prompt=name,
        kind="program",
        answer_format="code",
        payload={"io": "stdin", "examples": [], **(payload or {})},
        hidden={"cases": cases, **hidden},
    )


def py(code: str) -> str:
    return f"```python\n{code}```\n"


@pytest.fixture(scope="module")
def pv(program_sb):
    return ProgramVerifier(program_sb)


INVERSE = program_task(
    "inverse",
    [{"input": f"{n}\n", "output": f"{1 / n:.9f}\n"} for n in (3, 7, 9)],
    compare="float",
    float_tolerance=1e-4,
)


def test_float_within_tolerance_passes_and_too_coarse_fails(pv):
    assert pv.verify(INVERSE, py("print(f'{1/int(input()):.5f}')\n")).passed
    coarse = pv.verify(INVERSE, py("print(f'{1/int(input()):.2f}')\n"))
    assert coarse.reward == 0.0 and coarse.tests[0].detail.startswith("wrong answer")


def test_exact_mode_cares_about_spaces_but_not_the_final_newline(pv):
    task = program_task("exact", [{"input": "", "output": "a  b\n"}], compare="exact")
    assert pv.verify(task, py("print('a  b', end='')\n")).passed
    assert not pv.verify(task, py("print('a b')\n")).passed


SPLIT_CASES = [{"input": f"{n}\n", "output": f"1 {n - 1}\n"} for n in (5, 10, 99)]
PY_CHECKER = """\
import sys
n = int(open(sys.argv[1]).read())
try:
    a, b = map(int, open(sys.argv[2]).read().split())
except ValueError:
    sys.exit(1)
sys.exit(0 if a > 0 and b > 0 and a + b == n else 1)
"""
CPP_CHECKER = """\
#include <fstream>
int main(int argc, char** argv) {
    std::ifstream in(argv[1]), out(argv[2]), ans(argv[3]);
    long n, a, b;
    in >> n;
    if (!(out >> a >> b)) return 1;
    return (a > 0 && b > 0 && a + b == n) ? 0 : 1;
}
"""


@pytest.mark.parametrize("lang", ["python", "cpp"])
def test_a_checker_accepts_any_right_answer(pv, lang):
    source = PY_CHECKER if lang == "python" else CPP_CHECKER
    task = program_task(
        f"split-{lang}",
        SPLIT_CASES,
        compare="checker",
        checker={"language": lang, "source": source},
    )
    assert pv.verify(task, py("n = int(input())\nprint(1, n - 1)\n")).passed
    other = pv.verify(task, py("n = int(input())\nprint(n - 2, 2)\n"))
    assert other.passed, other.tests  # not the expected output, still right
    wrong = pv.verify(task, py("n = int(input())\nprint(n, 0)\n"))
    assert wrong.reward == 0.0 and wrong.tests[0].detail.startswith("wrong answer")
    garbage = pv.verify(task, py("print('ACCEPTED')\n"))
    assert garbage.reward == 0.0
    # Checkers never run in (a fork of) a process candidates run in.
    assert pv.checker_sandbox is not pv.sandbox


def test_a_failing_checker_rejects_and_raises_a_flag(pv):
    task = program_task(
        "broken-checker",
        SPLIT_CASES[:1],
        compare="checker",
        checker={"language": "python", "source": "import sys\nsys.exit(3)\n"},
    )
    v = pv.verify(task, py("print(1, 4)\n"))
    assert not v.passed and v.tests[0].detail.startswith("checker failed")
    assert [f.kind for f in v.flags] == ["checker-failed"]


def test_a_checker_that_does_not_compile_is_an_infra_error(pv):
    task = program_task(
        "bad-checker",
        SPLIT_CASES[:1],
        compare="checker",
        checker={"language": "cpp", "source": "int main( {"},
    )
    v = pv.verify(task, py("print(1, 4)\n"))
    assert v.infra_error is not None and "checker does not build" in v.infra_error


FN = program_task(
    "fn",
    [
        {"input": "[[1, 2, 3], 2]", "output": "[3, 4, 5]"},
        {"input": "[[], 7]", "output": "[]"},
        {"input": "[[-1], 0.5]", "output": "[-0.5]"},
    ],
    payload={"io": "function", "fn_name": "add_all", "languages": ["python"]},
)


def test_function_io_top_level_and_solution_method(pv):
    top = pv.verify(FN, py("def add_all(xs, k):\n    return [x + k for x in xs]\n"))
    assert top.passed, top.tests
    method = (
        "class Solution:\n    def add_all(self, xs, k):\n        return tuple(x + k for x in xs)\n"
    )
    assert pv.verify(FN, py(method)).passed


def test_function_io_outcomes_are_compared_as_plain_data(pv):
    always_equal = (
        "class Yes(list):\n    def __eq__(self, o): return True\n"
        "def add_all(xs, k):\n    return Yes()\n"
    )
    v = pv.verify(FN, py(always_equal))
    assert v.reward == 0.0 and all("not plain data" in t.detail for t in v.tests), v.tests
    wrong = pv.verify(FN, py("def add_all(xs, k):\n    return xs\n"))
    assert [t.status for t in wrong.tests] == ["failed", "passed", "failed"]
    raising = pv.verify(FN, py("def add_all(xs, k):\n    raise KeyError(k)\n"))
    assert all(t.status == "error" and "KeyError" in t.detail for t in raising.tests)
    missing = pv.verify(FN, py("def other(xs, k):\n    return xs\n"))
    assert missing.reward == 0.0 and missing.tests[0].status == "error"


def test_function_io_rejects_other_languages(pv):
    v = pv.verify(FN, "```cpp\nint main(){}\n```")
    assert v.infra_error is None and "not allowed" in v.tests[0].detail


def test_an_answer_without_a_language_is_a_per_sample_error(pv):
    task = program_task("nolang", SPLIT_CASES[:2], payload={"languages": ["c", "cpp"]})
    v = pv.verify(task, "int main(){}")
    assert v.infra_error is None and v.reward == 0.0
    assert [t.status for t in v.tests] == ["error", "error"]
    assert v.tests[0].detail.startswith("answer: no language")


def test_a_malformed_task_is_an_infra_error(pv):
    v = pv.verify(program_task("bad", []), py("print(1)\n"))
    assert v.infra_error is not None and not v.passed


def test_output_past_its_cap_fails(pv):
    v = pv.verify(
        SUM1, "```c\n#include <stdio.h>\nint main(){for(int i=0;i<3000000;i++)putchar('1');}\n```"
    )
    assert v.tests[0].status == "failed" and v.tests[0].detail == "output limit exceeded"


SUM1 = program_task("one", [{"input": "", "output": "1\n"}])
C_GOLD = '#include <stdio.h>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}\n'
AB = program_task("ab", [{"input": f"{a} {a}\n", "output": f"{2 * a}\n"} for a in range(6)])


def test_fresh_and_warm_paths_agree(program_sb, pv):
    fresh = ProgramVerifier(program_sb, warm=False)
    for code, reward in ((C_GOLD, 1.0), ("int main(){return 0;}\n", 0.0)):
        answer = f"```c\n{code}```"
        assert pv.verify(AB, answer).reward == fresh.verify(AB, answer).reward == reward


def test_dispatch_judges_program_tasks(program_sb):
    assert count_tests(AB) == 6
    with VerifierSet() as verifiers:
        v = verifiers.verify(AB, f"```c\n{C_GOLD}```")
    assert v.passed and v.verifier == "program@1" and v.sandbox is not None


@pytest.mark.parametrize("warm", [True, False])
def test_the_candidate_sees_only_its_program_and_its_stdin(program_sb, warm):
    spy = (
        "#include <stdio.h>\n#include <dirent.h>\nint main(int c,char**v){"
        'for(const char*d[]={"/workspace","/tmp",0},**p=d;*p;p++){DIR*x=opendir(*p);struct dirent*e;'
        'while(x&&(e=readdir(x)))printf("%s/%s\\n",*p,e->d_name);}'
        'for(int i=0;i<c;i++)printf("argv %s\\n",v[i]);'
        'FILE*f=fopen("/proc/self/environ","r");int ch;while(f&&(ch=fgetc(f))!=EOF)putchar(ch?ch:10);}\n'
    )
    built = build_program(program_sb, "c", spy)
    assert isinstance(built, Build)
    r = run_build(
        program_sb,
        built,
        b"the input\n",
        case_limits(built, 2.0, 64, 1 << 20),
        memory_mb=64,
        warm=warm,
    )
    listed = {line for line in r.stdout.splitlines() if line.startswith(("/workspace/", "/tmp/"))}
    names = {x.rsplit("/", 1)[1] for x in listed} - {".", ".."}
    assert names <= {"prog"}, r.stdout
    assert "expected" not in r.stdout.lower() and "answer" not in r.stdout.lower()


DEEP = program_task("deep", [{"input": "1000000\n", "output": "1000000\n"}])
DEEP_C = (
    "#include <stdio.h>\nlong d(long n){volatile char pad[64];pad[0]=0;"
    'return n?1+d(n-1)+pad[0]:0;}\nint main(){long n;scanf("%ld",&n);printf("%ld\\n",d(n));}\n'
)


DEEP_JS_TASK = program_task("deep-js", [{"input": "300000\n", "output": "300000\n"}])
DEEP_JS = (
    "const n=Number(require('fs').readFileSync(0,'utf8'));"
    "function d(k){return k?1+d(k-1):0}console.log(d(n));\n"
)


@pytest.mark.parametrize("warm", [True, False])
@pytest.mark.parametrize(("lang", "code"), [("c", DEEP_C), ("javascript", DEEP_JS)])
def test_programs_may_recurse_deeply(program_sb, warm, lang, code):
    task = DEEP if lang == "c" else DEEP_JS_TASK  # a million frames; node's are larger
    v = ProgramVerifier(program_sb, warm=warm).verify(task, f"```{lang}\n{code}```")
    assert v.passed, v.tests


def test_referee_verify_takes_a_language_per_sample(tmp_path):
    import json

    from typer.testing import CliRunner

    from referee.cli import app
    from referee.tasks import write_tasks

    write_tasks(tmp_path / "t.jsonl", [AB])
    samples = [
        {"task_id": AB.id, "completion": C_GOLD, "language": "c"},
        {"task_id": AB.id, "completion": C_GOLD},  # no fence, no language: Python, which fails
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    r = CliRunner().invoke(
        app,
        ["verify", "--tasks", str(tmp_path / "t.jsonl"), "--samples", str(tmp_path / "s.jsonl")],
    )
    assert r.exit_code == 0, r.output
    assert "2 samples: 1 passed, 1 failed, 0 infra errors" in r.output


def test_function_io_times_out_per_case(pv):
    task = program_task(
        "fn-slow",
        [
            {"input": "[1]", "output": "1"},
            {"input": "[0]", "output": "0", "time_limit_s": 0.3},
            {"input": "[2]", "output": "2"},
        ],
        payload={"io": "function", "fn_name": "f"},
    )
    v = pv.verify(task, py("def f(x):\n    while not x:\n        pass\n    return x\n"))
    assert [t.status for t in v.tests] == ["passed", "timeout", "passed"], v.tests
    assert v.tests[1].detail == "time limit exceeded (0.3s)"


def test_without_a_memory_cgroup_runtimes_get_their_reservations(monkeypatch):
    from referee.verify.program import program_sandbox
    from referee.verify.program.redteam import GOLD, SUM_TASK

    monkeypatch.setenv("REFEREE_NO_CGROUPS", "1")  # RLIMIT_AS stands in for the cgroup
    with program_sandbox(python_workers=1, toolchains=("python", "java", "go")) as sb:
        assert not any(x.startswith("cgroup") for x in sb.isolation())
        v = ProgramVerifier(sb)
        for lang in ("java", "go"):
            verdict = v.verify(SUM_TASK, f"```{lang}\n{GOLD[lang]}```")
            assert verdict.passed, (lang, verdict.tests)


@pytest.fixture(scope="module")
def fresh_pv(program_sb):
    return ProgramVerifier(program_sb, warm=False)


@pytest.mark.parametrize("lang", ["python", "c", "cpp", "java", "javascript", "go", "rust"])
def test_gold_passes_on_the_fresh_path_too(fresh_pv, lang):
    from referee.verify.program.redteam import GOLD, SUM_TASK

    v = fresh_pv.verify(SUM_TASK, f"```{lang}\n{GOLD[lang]}```")
    assert v.passed, v.tests


# ---- visible examples among the hidden cases ------------------------------------------------
WITH_EXAMPLE = program_task(
    "with-example",
    [
        {"input": "2 2\r\n", "output": "4\n"},  # the example, with other line ends
        {"input": "3 4\n", "output": "7\n"},
        {"input": "10 5\n", "output": "15\n"},
    ],
    payload={"examples": [{"input": "2 2\n", "output": "4\n"}]},
)
LOOKUP = "import sys\nprint({'2 2': 4}.get(sys.stdin.read().strip(), 0))\n"


def test_cases_that_repeat_an_example_are_reported_but_not_scored(pv):
    v = pv.verify(WITH_EXAMPLE, py(LOOKUP))
    assert [t.status for t in v.tests] == ["passed", "failed", "failed"]
    assert v.tests[0].detail == "example" and v.tests[1].detail.startswith("wrong answer")
    assert v.reward == 0.0 and not v.passed
    gold = pv.verify(WITH_EXAMPLE, py("print(sum(map(int, input().split())))\n"))
    assert gold.passed and gold.reward == 1.0 and gold.tests[0].detail == "example"
    # Failing the example costs nothing more, but is reported.
    wrong_on_example = "a, b = map(int, input().split())\nprint(7 if a == 2 else a + b)\n"
    v = pv.verify(WITH_EXAMPLE, py(wrong_on_example))
    assert v.passed and v.tests[0].status == "failed" and v.tests[0].detail.startswith("example; ")


def test_when_every_case_is_an_example_they_count(pv):
    only = program_task(
        "only-examples",
        [{"input": "2 2\n", "output": "4\n"}],
        payload={"examples": [{"input": "2 2", "output": "4"}]},
    )
    v = pv.verify(only, py(LOOKUP))
    assert v.passed and v.reward == 1.0 and v.tests[0].detail == "example"


def test_function_io_examples_are_matched_as_json(pv):
    task = program_task(
        "fn-examples",
        [{"input": "[[1, 2], 1]", "output": "[2, 3]"}, *FN.hidden["cases"]],
        payload={**FN.payload, "examples": [{"input": "[[1,2],1]", "output": "[2,3]"}]},
    )
    lookup = "def add_all(xs, k):\n    return [2, 3] if xs == [1, 2] else []\n"
    v = pv.verify(task, py(lookup))
    assert v.tests[0].status == "passed" and v.tests[0].detail == "example"
    assert v.reward == pytest.approx(1 / 3)  # only FN's own empty-list case, not the example
