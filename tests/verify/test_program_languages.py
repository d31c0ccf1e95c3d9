"""Each of the seven languages, for real in the sandbox: gold passes, and a wrong answer, a time
limit, a memory limit, a runtime error and a compile error each get their own outcome."""

from __future__ import annotations

import pytest

from referee.tasks.model import Task
from referee.verify.program import ProgramVerifier
from referee.verify.verdict import Verdict

AB = Task.create(
    name="test/ab-v1",
    prompt="Print a+b.",
    kind="program",
    answer_format="code",
    payload={
        "io": "stdin",
        "examples": [{"input": "1 1\n", "output": "2\n"}],
        "time_limit_s": 1.0,
        "memory_mb": 64,
    },
    hidden={"cases": [{"input": "1 2\n", "output": "3\n"}, {"input": "-4 10\n", "output": "6\n"}]},
)

P = {
    "python": {
        "gold": "a, b = map(int, input().split())\nprint(a + b)\n",
        "wrong": "a, b = map(int, input().split())\nprint(a - b)\n",
        "tle": "while True:\n    pass\n",
        "mle": "x = b'x' * (512 << 20)\nprint(len(x))\n",
        "re": "import sys\na, b = map(int, input().split())\nprint(a + b)\nsys.exit(3)\n",
        "ce": "def f(:\n    pass\n",
    },
    "c": {
        "gold": '#include <stdio.h>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}\n',
        "wrong": '#include <stdio.h>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a*b);}\n',
        "tle": "int main(){while(1);}\n",
        "mle": "#include <stdlib.h>\n#include <stdio.h>\nint main(){"
        "volatile char*p=malloc(512<<20);for(long i=0;i<(512L<<20);i+=4096)p[i]=1;"
        'printf("%d\\n",p[4096]);}\n',
        "re": '#include <stdio.h>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);'
        "fflush(stdout);int*volatile p=0;return *p;}\n",
        "ce": "int main(){ return undefined_name; }\n",
    },
    "cpp": {
        "gold": "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n",
        "wrong": "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a<<'\\n';}\n",
        "tle": "int main(){volatile unsigned x=0;for(;;)x++;}\n",
        "mle": "#include <vector>\n#include <cstdio>\nint main(){std::vector<char> v(512<<20,1);"
        'std::printf("%d\\n",v[99]);}\n',
        "re": "#include <iostream>\n#include <stdexcept>\nint main(){long a,b;std::cin>>a>>b;"
        'std::cout<<a+b<<std::endl;throw std::runtime_error("boom");}\n',
        "ce": "int main() { template garbage }\n",
    },
    "java": {
        "gold": "import java.util.*;\npublic class Main{public static void main(String[] x){"
        "Scanner s=new Scanner(System.in);long a=s.nextLong(),b=s.nextLong();System.out.println(a+b);}}\n",
        "wrong": "public class Main{public static void main(String[] x){System.out.println(0);}}\n",
        "tle": "public class Main{public static void main(String[] x){long i=0;while(true){i++;}}}\n",
        "mle": "public class Main{public static void main(String[] x){long[] a=new long[100000000];"
        "System.out.println(a.length);}}\n",
        "re": "import java.util.*;\nclass Sol{public static void main(String[] x){"
        "Scanner s=new Scanner(System.in);long a=s.nextLong(),b=s.nextLong();System.out.println(a+b);"
        "int[] z=new int[1];z[2]=1;}}\n",
        "ce": 'public class Main{public static void main(String[] x){int y = "s";}}\n',
    },
    "javascript": {
        "gold": 'const [a,b]=require("fs").readFileSync(0,"utf8").trim().split(/\\s+/).map(Number);'
        "console.log(a+b);\n",
        "wrong": "console.log(42);\n",
        "tle": "for(;;){}\n",
        "mle": "const a=[];for(;;)a.push(new Array(1e6).fill(1.5));\n",
        "re": 'const [a,b]=require("fs").readFileSync(0,"utf8").trim().split(/\\s+/).map(Number);'
        "console.log(a+b);process.exitCode=3;\n",
        "ce": "function ( {\n",
    },
    "go": {
        "gold": 'package main\nimport "fmt"\nfunc main(){var a,b int64;fmt.Scan(&a,&b);fmt.Println(a+b)}\n',
        "wrong": 'package main\nimport "fmt"\nfunc main(){fmt.Println(-1)}\n',
        "tle": "package main\nfunc main(){for{}}\n",
        "mle": 'package main\nimport "fmt"\nfunc main(){b:=make([]byte,512<<20);for i:=range b{b[i]=1};'
        "fmt.Println(b[5])}\n",
        "re": 'package main\nimport "fmt"\nfunc main(){var a,b int64;fmt.Scan(&a,&b);fmt.Println(a+b);'
        'var m map[string]int;m["x"]=1}\n',
        "ce": "package main\nfunc main(){ x := 1 }\n",
    },
    "rust": {
        "gold": "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_to_string(&mut s).unwrap();"
        'let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();println!("{}",v[0]+v[1]);}\n',
        "wrong": 'fn main(){println!("7");}\n',
        "tle": 'fn main(){let mut i:u64=1;loop{i=i.wrapping_mul(3);if i==0{println!("{}",i);}}}\n',
        "mle": 'fn main(){let v=vec![1u8;512<<20];println!("{}",v[7]);}\n',
        "re": "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_to_string(&mut s).unwrap();"
        'let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();println!("{}",v[0]+v[1]);'
        'panic!("boom");}\n',
        "ce": 'fn main(){ let x: u32 = "no"; }\n',
    },
}
LANGS = list(P)


@pytest.fixture(scope="module")
def judge(program_sb):
    verdicts: dict[tuple[str, str], Verdict] = {}
    plain = ProgramVerifier(program_sb)
    first_fail = ProgramVerifier(program_sb, stop_on_first_failure=True)

    def get(lang: str, kind: str) -> Verdict:
        if (lang, kind) not in verdicts:
            v = first_fail if kind in ("tle", "mle") else plain
            verdicts[lang, kind] = v.verify(AB, f"```{lang}\n{P[lang][kind]}```\n")
        return verdicts[lang, kind]

    return get


@pytest.mark.parametrize("lang", LANGS)
def test_gold_passes(judge, lang):
    v = judge(lang, "gold")
    assert v.infra_error is None
    assert v.passed and v.reward == 1.0, v.tests
    assert [t.name for t in v.tests] == ["case-0", "case-1"]
    assert v.timings["compile_s"] >= 0


@pytest.mark.parametrize("lang", LANGS)
def test_wrong_answer_fails(judge, lang):
    v = judge(lang, "wrong")
    assert not v.passed and v.reward == 0.0
    assert all(t.status == "failed" and t.detail.startswith("wrong answer") for t in v.tests), (
        v.tests
    )


@pytest.mark.parametrize("lang", LANGS)
def test_time_limit_is_a_timeout_and_later_cases_are_skipped(judge, lang):
    v = judge(lang, "tle")
    first, second = v.tests
    assert first.status == "timeout" and first.detail.startswith("time limit"), first
    assert second.status == "skipped" and v.reward == 0.0


@pytest.mark.parametrize("lang", LANGS)
def test_memory_limit_is_an_error(judge, lang):
    v = judge(lang, "mle")
    first, second = v.tests
    assert first.status == "error" and first.detail.startswith("memory limit"), first
    assert second.status == "skipped" and v.reward == 0.0


@pytest.mark.parametrize("lang", LANGS)
def test_runtime_error_fails_even_with_the_right_output(judge, lang):
    v = judge(lang, "re")
    assert v.reward == 0.0
    assert all(t.status == "error" and t.detail.startswith("runtime error") for t in v.tests), (
        v.tests
    )


@pytest.mark.parametrize("lang", LANGS)
def test_compile_error_is_every_case(judge, lang):
    v = judge(lang, "ce")
    assert v.reward == 0.0 and v.infra_error is None
    assert all(t.status == "error" and t.detail.startswith("compile error") for t in v.tests), (
        v.tests
    )
