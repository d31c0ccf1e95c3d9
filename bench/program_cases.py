"""Programs in seven languages: compile time, and the cost of one test case after compilation.

    PYTHONPATH=src .venv/bin/python bench/program_cases.py [--rounds 3] [--warm 40] [--fresh 15]
        [--languages c,cpp,...] [--no-redteam]

For each language, an A+B program is built ``--rounds`` times (the median is reported), then run
on one case many times, measured side by side in one process (the machine is shared and noisy,
so compare ratios):

* ``warm``: the verifier's default path, a fork of a warm fork-server worker that execs the
  built program (:func:`referee.verify.program.execute.run_build`), end to end as the caller
  sees it, output compared;
* ``fresh``: the anchor, a new bubblewrap sandbox for every case (``warm=False``).

Then the red-team corpus (:mod:`referee.verify.program.redteam`) runs per language: how many
exploits held (scored no more than an empty program, never passed) and whether gold passed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from referee.verify.program import ProgramVerifier, program_sandbox
from referee.verify.program.build import Build, build_program
from referee.verify.program.compare import compare
from referee.verify.program.execute import case_limits, classify, run_build
from referee.verify.program.redteam import EXPLOITS, GOLD, SUM_TASK, run_corpus

AB = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "c": '#include <stdio.h>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}\n',
    "cpp": "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n",
    "java": "import java.io.*;import java.util.*;\npublic class Main{"
    "public static void main(String[] x)throws IOException{"
    "StringTokenizer t=new StringTokenizer(new BufferedReader(new "
    "InputStreamReader(System.in)).readLine());System.out.println(Long.parseLong(t.nextToken())"
    "+Long.parseLong(t.nextToken()));}}\n",
    "javascript": 'const [a,b]=require("fs").readFileSync(0,"utf8").trim().split(/\\s+/)'
    ".map(Number);console.log(a+b);\n",
    "go": 'package main\nimport "fmt"\nfunc main(){var a,b int64;fmt.Scan(&a,&b);'
    "fmt.Println(a+b)}\n",
    "rust": "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_to_string(&mut s)"
    ".unwrap();let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();"
    'println!("{}",v[0]+v[1]);}\n',
}
SLOW = {"java", "javascript"}  # a runtime's start dominates: fewer runs


def per_case(sb, built: Build, n: int, warm: bool) -> list[float]:
    limits = case_limits(built, 2.0, 256, 1 << 20)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        r = run_build(sb, built, b"3 4\n", limits, memory_mb=256, warm=warm)
        ok = classify(r, 2.0) is None and compare("tokens", r.stdout, "7\n")[0]
        out.append(time.perf_counter() - t)
        if not ok:
            raise SystemExit(f"{built.toolchain.language}: the A+B run failed: {r.summary()}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=int, default=40)
    ap.add_argument("--fresh", type=int, default=15)
    ap.add_argument("--no-redteam", action="store_true")
    ap.add_argument("--languages", default=",".join(AB), help="Comma-separated subset.")
    args = ap.parse_args()
    sb = program_sandbox(python_workers=2)
    rows = {}
    try:
        chosen = [x for x in args.languages.split(",") if x]
        for lang, code in ((x, AB[x]) for x in chosen):
            builds = []
            for _ in range(args.rounds):
                built = build_program(sb, lang, code)
                assert isinstance(built, Build), built
                builds.append(built)
            compile_s = statistics.median(b.compile_s for b in builds)
            n_warm = args.warm // 4 if lang in SLOW else args.warm
            n_fresh = args.fresh // 3 if lang in SLOW else args.fresh
            per_case(sb, builds[0], 3, True)  # start the workers, touch the files
            warm, fresh = [], []
            for _ in range(2):  # interleaved halves: load drifts alike on both paths
                warm += per_case(sb, builds[0], n_warm // 2, True)
                fresh += per_case(sb, builds[0], n_fresh // 2, False)
            tc = sb.toolchains[lang]
            rows[lang] = {
                "toolchain": tc.version,
                "compile_s": compile_s,
                "warm_ms": statistics.median(warm) * 1000,
                "fresh_ms": statistics.median(fresh) * 1000,
                "n_warm": len(warm),
                "n_fresh": len(fresh),
            }
            print(lang, rows[lang], flush=True)
        if not args.no_redteam:
            v = ProgramVerifier(sb)
            results = run_corpus(v)
            for lang in chosen:
                mine = [r for r in results if r.language == lang]
                gold = v.verify(SUM_TASK, f"```{lang}\n{GOLD[lang]}```\n").passed
                rows[lang]["redteam"] = {
                    "held": sum(r.held for r in mine),
                    "exploits": len(mine),
                    "gold_passed": gold,
                    "broken": [r.name for r in mine if not r.held],
                }
            assert len(results) == len(EXPLOITS)
    finally:
        sb.close()
    print()
    print(
        "| language | toolchain | compile s | per case ms, warm | per case ms, fresh sandbox "
        "| red team |"
    )
    print("|---|---|---|---|---|---|")
    for lang, row in rows.items():
        rt = row.get("redteam")
        red = (
            f"{rt['held']}/{rt['exploits']} held, gold {'passes' if rt['gold_passed'] else 'FAILS'}"
            if rt
            else "-"
        )
        print(
            f"| {lang} | {row['toolchain']} | {row['compile_s']:.2f} | {row['warm_ms']:.1f} "
            f"| {row['fresh_ms']:.1f} | {red} |"
        )
    save("program_cases", {"machine": machine(), "rows": rows, "args": vars(args)})


if __name__ == "__main__":
    main()
