"""Java, JavaScript and Verilog against their floors (issue 32): rows for ``make bench-floor``.

    PYTHONPATH=src:bench .venv/bin/python bench/floor_programs.py [--quick] [--levers]

:func:`rows` measures, through the public verify path of whichever tree is on ``PYTHONPATH``
(the same calls exist in the tree before issue 32 and after, so one file measures both):

* **Java / JavaScript, per case**: ``ProgramVerifier().verify`` on the sum task with
  ``CASES`` hidden cases, the gold answer; the cost is the verdict's ``run_s`` (every case's
  run, limits and comparison, the build left out) over the cases. The floor is a fresh runtime
  per case on the host, no sandbox, run with the argv the tree's toolchain runs a case with
  (its flags, its archives), the same gold program built by ``javac`` on the host: what a
  judge that keeps cases apart by a fresh runtime must pay per case. The ratio is then the
  sandbox's share; the runtime's own start shows in the floor itself (see
  ``--levers`` for what a runtime shared by a sample's cases would cost, and why it is not
  the floor chosen).
* **Verilog, per sample**: ``VerilogVerifier().verify`` of each family's reference (its own
  trace cached after the first call, as in training, where the reference is simulated once
  per task); the floor is ``iverilog`` then ``vvp`` on the host, no sandbox, on the same
  testbench, design and stimulus files.

Every floor runs trusted code only (the bench's gold programs and the tasks' references).
Costs and floors are measured interleaved, round by round, so load drifts alike on both.

``--levers`` measures, on the host, what each lever for a managed runtime's start costs in
isolation (the flags the toolchains use, a class-data-sharing archive of the JDK classes the
program loads, no perf-data file, C1 only, a V8 startup snapshot, and a runtime shared by a
sample's cases: a fresh class loader per case in one JVM, a fresh ``vm`` context or worker per
case in one node).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CASES = 6
VERILOG_FAMILIES = ("v-comb", "v-arith", "v-counter", "v-shift", "v-fsm")


def _sum_task(k: int) -> Any:
    from referee.verify.program.redteam import SUM_TASK

    cases = [{"input": f"3\n{i} 20 -3\n", "output": f"{i + 17}\n"} for i in range(k)]
    return SUM_TASK.revised(hidden={**SUM_TASK.hidden, "cases": cases})


def _java_home() -> Path:
    javac = shutil.which("javac")
    assert javac is not None, "javac is not installed"
    return Path(javac).resolve().parent


def _host_argv(lang: str, where: Path, memory_mb: int) -> list[str]:
    """The argv the tree's toolchain runs a case with, pointed at ``where`` on the host: the
    workspace and the toolchain's own mounts (the JDK's archives) replaced by host paths."""
    from referee.sandbox.toolchains import find_toolchain

    tc = find_toolchain(lang)
    mounts = {dest: host for host, dest in tc.binds}
    argv = tc.run_command(memory_mb, "Main")
    out = []
    for a in argv:
        a = a.replace("/workspace", str(where))
        for dest, host in mounts.items():
            a = a.replace(dest, host)
        out.append(a)
    return out


def _host_build(lang: str, code: str, where: Path, memory_mb: int = 128) -> list[str]:
    """The argv of the gold program built on the host (trusted: the bench's own program),
    run as the tree's toolchain runs a case."""
    if lang == "java":
        (where / "Main.java").write_text(code)
        subprocess.run(
            [str(_java_home() / "javac"), "-d", str(where), str(where / "Main.java")], check=True
        )
    else:
        (where / "main.js").write_text(code)
    return _host_argv(lang, where, memory_mb)


#: What a floor run sees: the sandbox's environment (``SandboxView.env``), not this process's
#: (a host's ``NODE_EXTRA_CA_CERTS`` alone makes node parse a certificate bundle per start).
FLOOR_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "USER": "sandbox",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": "/tmp",
}


def _digest(verdicts: list[Any]) -> str:
    """A digest of the distinct verdicts a row's runs gave (reward, pass, each test's status):
    ``make bench-floor`` checks it is the same in both trees."""
    seen = {
        json.dumps([v.reward, v.passed, [[t.name, t.status] for t in v.tests]]) for v in verdicts
    }
    return hashlib.sha256("\n".join(sorted(seen)).encode()).hexdigest()[:16]


def _bare(argv: list[str], stdin: bytes, cwd: Path | None = None) -> float:
    t = time.perf_counter()
    # A session of its own, as every sandbox run has: the kernel's autogroups share CPU
    # between sessions first, so a floor run in this process's session would queue behind
    # whatever else the session runs while a sandboxed run did not.
    p = subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        cwd=cwd,
        check=False,
        start_new_session=True,
        env=FLOOR_ENV,
    )
    took = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"floor run failed: {argv[0]}: {p.stderr.decode()[-300:]}")
    return took


def _program_rows(rounds: int) -> list[dict[str, Any]]:
    from referee.verify.program import ProgramVerifier
    from referee.verify.program.redteam import GOLD

    task = _sum_task(CASES)
    out = []
    with ProgramVerifier() as v, tempfile.TemporaryDirectory() as tmp:
        for lang, kind in (("java", "Java"), ("javascript", "JavaScript")):
            answer = f"```{lang}\n{GOLD[lang]}```\n"
            where = Path(tmp) / lang
            where.mkdir()
            argv = _host_build(lang, GOLD[lang], where)
            inputs = [c["input"].encode() for c in task.hidden["cases"]]
            v.verify(task, answer)  # start the workers, touch the files
            cost, floor, verdicts = [], [], []
            for _ in range(rounds):
                verdict = v.verify(task, answer)
                verdicts.append(verdict)
                if not verdict.passed:
                    raise SystemExit(f"{lang}: the gold answer failed: {verdict.tests}")
                cost.append(verdict.timings["run_s"] / CASES)
                floor.append(statistics.mean(_bare(argv, x, where) for x in inputs))
            what = "a fresh JVM" if lang == "java" else "a fresh node"
            out.append(
                {
                    "kind": f"{kind}, per case",
                    "unit": "case",
                    "cost_ms": statistics.median(cost) * 1000,
                    "floor_ms": statistics.median(floor) * 1000,
                    "verdicts": _digest(verdicts),
                    "note": f"floor: {what} per case on the host without the sandbox, with "
                    f"the argv the tree's toolchain runs (`{' '.join(argv[1:])}`), the sum "
                    f"task's gold answer; cost: ProgramVerifier.verify's run_s over {CASES} "
                    "cases",
                }
            )
    return out


def _verilog_row(rounds: int, families: tuple[str, ...]) -> dict[str, Any]:
    from referee.domains.verilog.families import generate
    from referee.domains.verilog.spec import verilog_spec
    from referee.domains.verilog.testbench import STIMULUS_FILE, stimulus_hex, stimulus_vectors
    from referee.domains.verilog.testbench import testbench as make_testbench
    from referee.domains.verilog.verifier import VerilogVerifier

    iverilog, vvp = shutil.which("iverilog"), shutil.which("vvp")
    assert iverilog and vvp, "Icarus Verilog is not installed"
    tasks = [generate(f, 1, 0.5, 100)[0] for f in families]
    costs, floors, verdicts = [], [], []
    with VerilogVerifier() as v, tempfile.TemporaryDirectory() as tmp:
        for i, task in enumerate(tasks):
            spec = verilog_spec(task)
            vectors = stimulus_vectors(spec)
            tb_name, tb = make_testbench(spec, "Rfloor", len(vectors))
            d = Path(tmp) / str(i)
            d.mkdir()
            (d / "tb.v").write_text(tb)
            (d / "design.v").write_text(spec.reference)
            (d / STIMULUS_FILE).write_text(stimulus_hex(spec, vectors))
            compile_argv = [iverilog, "-g2012", "-s", tb_name, "-o", "sim.vvp", "tb.v", "design.v"]

            def floor_once() -> float:
                return _bare(compile_argv, b"", d) + _bare([vvp, "-n", "sim.vvp"], b"", d)  # noqa: B023

            answer = task.hidden["reference"]
            first = v.verify(task, answer)  # simulates the reference once (cached after)
            if not first.passed:
                raise SystemExit(f"{task.id}: the reference failed: {first.tests}")
            c, f = [], []
            for _ in range(rounds):
                t = time.perf_counter()
                verdict = v.verify(task, answer)
                c.append(time.perf_counter() - t)
                verdicts.append(verdict)
                assert verdict.passed, verdict.tests
                f.append(floor_once())
            costs.append(statistics.median(c))
            floors.append(statistics.median(f))
    return {
        "kind": "Verilog, per sample",
        "unit": "sample",
        "cost_ms": statistics.mean(costs) * 1000,
        "floor_ms": statistics.mean(floors) * 1000,
        "verdicts": _digest(verdicts),
        "note": f"floor: `iverilog` then `vvp` on the host without the sandbox, same files; "
        f"cost: VerilogVerifier.verify of the reference (trace cached); mean over "
        f"{len(tasks)} families ({', '.join(families)}) at difficulty 0.5",
    }


def rows(quick: bool) -> list[dict[str, Any]]:
    """Java and JavaScript per case, Verilog per sample: cost through the public verify path
    and the floor beside it, measured interleaved in this process."""
    rounds = 3 if quick else 8
    families = VERILOG_FAMILIES[:2] if quick else VERILOG_FAMILIES
    return [*_program_rows(rounds), _verilog_row(rounds, families)]


# ---- levers, each in isolation, on the host (trusted programs only) ---------------------------

_WARM_JAVA = """
import java.io.*;import java.net.*;import java.lang.reflect.*;
public class Warm{public static void main(String[] a)throws Exception{
 URL[] u={new File(a[0]).toURI().toURL()};int n=Integer.parseInt(a[1]);
 byte[] in="3\\n1 20 -3\\n".getBytes();PrintStream so=System.out;long t0=0;
 for(int i=0;i<n+20;i++){if(i==20)t0=System.nanoTime();
  URLClassLoader l=new URLClassLoader(u,ClassLoader.getPlatformClassLoader());
  Method m=l.loadClass("Main").getMethod("main",String[].class);
  ByteArrayOutputStream bo=new ByteArrayOutputStream();
  System.setIn(new ByteArrayInputStream(in));System.setOut(new PrintStream(bo));
  m.invoke(null,(Object)new String[0]);System.out.flush();System.setOut(so);l.close();
  if(!bo.toString().trim().equals("18"))throw new Error(bo.toString());}
 so.println((System.nanoTime()-t0)/1e6/n);}}
"""
_WARM_VM = """
const vm=require("vm"),fs=require("fs");const src=fs.readFileSync(process.argv[2],"utf8");
const n=+process.argv[3];const wrapped="(function(require,console){"+src+"\\n})";let t0;
for(let i=0;i<n+20;i++){if(i==20)t0=process.hrtime.bigint();let out="";
 const fake={readFileSync:()=>"3\\n1 20 -3\\n"};const req=(m)=>m==="fs"?fake:require(m);
 const fn=vm.runInContext(wrapped,vm.createContext({BigInt,Number}));
 fn(req,{log:(x)=>{out+=x+"\\n"}});if(out.trim()!=="18")throw new Error(out);}
console.log(Number(process.hrtime.bigint()-t0)/1e6/n);
"""
_WARM_WORKER = """
const {Worker}=require("worker_threads");const n=+process.argv[3];let i=0,t0;
function one(){if(i==5)t0=process.hrtime.bigint();
 if(i==n+5){console.log(Number(process.hrtime.bigint()-t0)/1e6/n);return;}
 const w=new Worker("process.stdout.write('18\\\\n')",{eval:true,stdout:true});
 w.stdout.on("data",()=>{});w.on("exit",()=>{i++;one();});}
one();
"""


def levers(rounds: int) -> list[dict[str, Any]]:
    """Each lever's per-case cost on the host, interleaved; the gold sum programs."""
    from referee.sandbox.toolchains import find_toolchain
    from referee.verify.program.redteam import GOLD

    out: list[dict[str, Any]] = []
    stdin = b"3\n1 20 -3\n"
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        java_argv = _host_build("java", GOLD["java"], d)
        node_argv = _host_build("javascript", GOLD["javascript"], d)
        java = java_argv[0]
        run = [a for a in find_toolchain("java").run_command(128) if a != "-XX:-UsePerfData"]
        # The toolchain's flags before issue 32 (without the perf-data switch and the archive).
        flags = [a for a in run[1:] if a.startswith("-X") and "SharedArchiveFile" not in a]
        tc = find_toolchain("java")
        theirs = {dest: host for host, dest in tc.binds}
        product_jsa = next((h for dest, h in theirs.items() if dest.endswith("/jdk-cds.jsa")), "")
        javac_jsa = next((h for dest, h in theirs.items() if dest.endswith("/javac-cds.jsa")), "")
        cp = ["-cp", str(d), "Main"]
        subprocess.run(
            [java, *flags, f"-XX:DumpLoadedClassList={d}/all.list", *cp],
            input=stdin,
            capture_output=True,
            check=True,
        )
        listed = (d / "all.list").read_text().splitlines()
        (d / "jdk.list").write_text("\n".join(x for x in listed if not x.startswith("Main")))
        subprocess.run(
            [
                java,
                *flags,
                "-Xshare:dump",
                f"-XX:SharedClassListFile={d}/jdk.list",
                f"-XX:SharedArchiveFile={d}/jdk.jsa",
            ],
            capture_output=True,
            check=True,
        )
        node = node_argv[0]
        node_flags = ["--max-old-space-size=128", "--stack-size=98304"]
        (d / "entry.js").write_text('require("fs");\n')
        subprocess.run(
            [
                node,
                *node_flags,
                "--snapshot-blob",
                str(d / "snap.blob"),
                "--build-snapshot",
                str(d / "entry.js"),
            ],
            check=True,
        )
        variants: dict[str, list[str]] = {
            "java, the toolchain's flags before issue 32": [java, *flags, *cp],
            "java, + -XX:-UsePerfData (taken)": [java, *flags, "-XX:-UsePerfData", *cp],
            "java, + referee's CDS archive (from its warm-up; taken)": [
                java,
                *flags,
                f"-XX:SharedArchiveFile={product_jsa}",
                *cp,
            ],
            "java, + a CDS archive of this program's own JDK classes": [
                java,
                *flags,
                f"-XX:SharedArchiveFile={d}/jdk.jsa",
                *cp,
            ],
            "java, + both taken (perf data off, referee's archive)": [
                java,
                *flags,
                "-XX:-UsePerfData",
                f"-XX:SharedArchiveFile={product_jsa}",
                *cp,
            ],
            "java, + -XX:TieredStopAtLevel=1 (C1 only)": [
                java,
                *flags,
                "-XX:TieredStopAtLevel=1",
                *cp,
            ],
            "java, -Xshare:off (no CDS at all)": [java, *flags, "-Xshare:off", *cp],
            "java -version (JVM start alone)": [java, *flags, "-version"],
            "node, the toolchain's flags": [node, *node_flags, node_argv[-1]],
            "node, + V8 startup snapshot (--snapshot-blob)": [
                node,
                *node_flags,
                "--snapshot-blob",
                str(d / "snap.blob"),
                node_argv[-1],
            ],
            "node -e 0 (start alone)": [node, "-e", "0"],
        }
        compile_flags = [a for a in tc.compile_command("Main.java") if a.startswith("-J")]
        plain = [a for a in compile_flags if "SharedArchiveFile" not in a]
        javac = str(_java_home() / "javac")
        (d / "c").mkdir()
        source = str(d / "Main.java")
        variants["javac, the toolchain's flags (build, per sample)"] = [
            javac,
            *plain,
            "-d",
            str(d / "c"),
            source,
        ]
        variants["javac, + its own CDS archive (taken)"] = [
            javac,
            *plain,
            f"-J-XX:SharedArchiveFile={javac_jsa}",
            "-d",
            str(d / "c"),
            source,
        ]
        times: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(rounds):
            for k, argv in variants.items():
                times[k].append(_bare(argv, stdin, d))
        for k, ts in times.items():
            out.append({"lever": k, "per_case_ms": statistics.median(ts) * 1000})
        (d / "w").mkdir()
        (d / "w" / "Warm.java").write_text(_WARM_JAVA)
        subprocess.run(
            [str(_java_home() / "javac"), "-d", str(d / "w"), str(d / "w" / "Warm.java")],
            check=True,
        )
        (d / "warm.js").write_text(_WARM_VM)
        (d / "worker.js").write_text(_WARM_WORKER)
        shared = {
            "java, one JVM per sample: a fresh class loader per case": [
                java,
                "-XX:+UseSerialGC",
                "-cp",
                str(d / "w"),
                "Warm",
                str(d),
                "200",
            ],
            "node, one process per sample: a fresh vm context per case": [
                node,
                str(d / "warm.js"),
                node_argv[-1],
                "200",
            ],
            "node, one process per sample: a fresh worker per case": [
                node,
                str(d / "worker.js"),
                node_argv[-1],
                "30",
            ],
        }
        for k, argv in shared.items():
            got = [
                float(
                    subprocess.run(
                        argv,
                        capture_output=True,
                        text=True,
                        check=True,
                        cwd=d,
                        start_new_session=True,
                        env=FLOOR_ENV,
                    ).stdout
                )
                for _ in range(3)
            ]
            out.append({"lever": k, "per_case_ms": statistics.median(got)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--levers", action="store_true", help="Also each lever in isolation.")
    ap.add_argument("--levers-only", action="store_true", help="The levers, not the rows.")
    ap.add_argument("--rounds", type=int, help="Rounds of the levers (default 5 quick, 12).")
    ap.add_argument("--out", help="Write the rows (and levers) as JSON here.")
    args = ap.parse_args()
    result: dict[str, Any] = {"loadavg_before": Path("/proc/loadavg").read_text().split()[:3]}
    result["rows"] = [] if args.levers_only else rows(args.quick)
    if args.levers or args.levers_only:
        result["levers"] = levers(args.rounds or (5 if args.quick else 12))
    result["loadavg_after"] = Path("/proc/loadavg").read_text().split()[:3]
    for r in result["rows"]:
        print(
            f"{r['kind']:24s} cost {r['cost_ms']:8.1f} ms  floor {r['floor_ms']:8.1f} ms  "
            f"ratio {r['cost_ms'] / r['floor_ms']:5.2f}"
        )
    for lv in result.get("levers", []):
        print(f"{lv['lever']:62s} {lv['per_case_ms']:8.1f} ms")
    print("load", result["loadavg_before"], "->", result["loadavg_after"])
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
