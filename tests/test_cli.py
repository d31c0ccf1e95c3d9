"""The `referee` CLI contract (other tools depend on it)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REFEREE = [sys.executable, "-m", "referee.cli"]
KEYS = {
    "exit_code",
    "signal",
    "timed_out",
    "memory_exceeded",
    "stdout",
    "stderr",
    "stdout_truncated",
    "stderr_truncated",
    "wall_s",
    "cpu_s",
    "peak_memory_mb",
    "violations",
}


def referee(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*REFEREE, *args], capture_output=True, input=stdin, timeout=120)


def test_exec_json_has_the_contract_keys():
    p = referee("exec", "--json", "--", "python3", "-c", "print(6*7)")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) >= KEYS
    assert out["stdout"] == "42\n" and out["exit_code"] == 0 and out["violations"] == []


def test_exec_exits_with_the_programs_status_like_timeout_and_docker_run(tmp_path: Path):
    # issue 20: exec exited 0 whatever the program did. Now: the program's status, 124 for a
    # timeout, 128+N for signal N, 126/127 not invocable/not found; --json prints the whole
    # result and exits the same.
    p = referee("exec", "--json", "--timeout", "1", "--", "python3", "-c", "while True: pass")
    assert p.returncode == 124
    out = json.loads(p.stdout)
    assert out["timed_out"] and "timeout" in out["violations"]
    p = referee("exec", "--json", "--", "sh", "-c", "exit 9")
    assert p.returncode == 9 and json.loads(p.stdout)["exit_code"] == 9
    assert referee("exec", "--", "python3", "-c", "import sys; sys.exit(3)").returncode == 3
    assert referee("exec", "--", "sh", "-c", "kill -TERM $$").returncode == 128 + 15
    assert referee("exec", "--", "no-such-command").returncode == 127
    (tmp_path / "f.sh").write_text("echo hi\n")  # not executable
    p = referee("exec", "--json", "--file", f"f.sh={tmp_path / 'f.sh'}", "--", "./f.sh")
    assert p.returncode == 126 and json.loads(p.stdout)["exit_code"] == 126


def test_exec_own_failures_exit_125_and_are_documented():
    from referee.errors import EXEC_FAILED

    assert EXEC_FAILED == 125
    for args in (["--timeout", "0"], ["--timeout", "x"], ["--no-such-option"]):
        p = referee("exec", *args, "--", "true")
        assert p.returncode == 125, (args, p.stderr)
    assert b"Traceback" not in p.stderr
    help_text = _flat(referee("exec", "--help").stdout)
    for said in ("124", "125", "126", "127", "128+N"):
        assert said in help_text
    # Documented where the README's exec section moved (issue 31's site): the sandbox concept.
    page = (Path(__file__).parents[1] / "docs" / "concepts" / "sandbox.md").read_text()
    assert "128+N" in page and "125" in page


def test_exec_memory_option(tmp_path):
    p = referee(
        "exec", "--json", "--memory", "64", "--", "python3", "-c", "b = bytearray(300 << 20)"
    )
    assert json.loads(p.stdout)["memory_exceeded"]


def test_exec_places_files_and_feeds_stdin(tmp_path: Path):
    (tmp_path / "sol.py").write_text("import sys\nprint(open('data/x').read(), sys.stdin.read())")
    (tmp_path / "x").write_text("file")
    (tmp_path / "in").write_text("piped")
    p = referee(
        "exec",
        "--json",
        "--file",
        f"main.py={tmp_path / 'sol.py'}",
        "--file",
        f"data/x={tmp_path / 'x'}",
        "--stdin",
        str(tmp_path / "in"),
        "--",
        "python3",
        "main.py",
    )
    assert json.loads(p.stdout)["stdout"] == "file piped\n"


def test_exec_python_fast_path(tmp_path: Path):
    (tmp_path / "prog.py").write_text("import sys; print(sys.argv[0])")
    p = referee("exec", "--json", "--python", str(tmp_path / "prog.py"))
    out = json.loads(p.stdout)
    assert out["stdout"] == "prog.py\n" and out["backend"] == "bwrap-forkserver"


def test_exec_without_json_relays_output():
    p = referee("exec", "--", "sh", "-c", "echo out; echo err >&2")
    assert p.returncode == 0 and p.stdout == b"out\n" and b"err\n" in p.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["exec", "--file", "../x=/etc/hostname", "--", "true"], b"'..'"),
        (["exec", "--file", "/abs=/etc/hostname", "--", "true"], b"absolute"),
        (["exec", "--file", "nodest", "--", "true"], b"DEST=SRC"),
        (["exec", "--file", "a=/nonexistent/file", "--", "true"], b"cannot read"),
        (["exec", "--timeout", "0", "--", "true"], b"--timeout must be"),
        (["exec"], b"either a command"),
    ],
)
def test_bad_arguments_exit_125_with_a_clear_message(args, message):
    # exec's own failures are 125 since issue 20 (2 could be the program's status)
    p = referee(*args)
    assert p.returncode == 125, p
    assert message in p.stderr


def test_missing_bubblewrap_exits_125_in_exec_and_names_the_package(tmp_path):
    env = {"PATH": str(tmp_path), "HOME": "/tmp"}
    env.update({k: v for k, v in os.environ.items() if k == "PYTHONPATH"})  # the tree under test
    p = subprocess.run([*REFEREE, "exec", "--", "true"], capture_output=True, env=env, timeout=60)
    assert p.returncode == 125 and b"apt-get install bubblewrap" in p.stderr


def test_doctor_json():
    p = referee("doctor", "--json")
    assert p.returncode == 0
    info = json.loads(p.stdout)
    assert info["fast_path_ok"] and "seccomp" in info["layers"]


@pytest.fixture(scope="module")
def humaneval_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tasks") / "he.jsonl"
    p = referee("tasks", "import", "humaneval", "--out", str(path))
    assert p.returncode == 0, p.stderr
    return path


def test_tasks_import_list_stats_show_gold(humaneval_file):
    p = referee("tasks", "stats", str(humaneval_file), "--json")
    stats = json.loads(p.stdout)
    assert stats["tasks"] == 164 and stats["by_split"] == {"heldout": 164}
    rows = [
        json.loads(x)
        for x in referee("tasks", "list", str(humaneval_file), "--json").stdout.splitlines()
    ]
    assert rows[0]["id"] == "HumanEval/0" and rows[-1]["id"] == "HumanEval/163"
    shown = json.loads(referee("tasks", "show", str(humaneval_file), "HumanEval/7").stdout)
    assert shown["hidden"]["reference"] == "<hidden>"
    gold = [
        json.loads(x) for x in referee("tasks", "gold", str(humaneval_file)).stdout.splitlines()
    ]
    assert len(gold) == 164 and set(gold[0]) == {"task_id", "completion"}


def test_verify_json_contract_on_gold_and_wrong_samples(humaneval_file, tmp_path):
    samples = tmp_path / "s.jsonl"
    gold = referee("tasks", "gold", str(humaneval_file)).stdout.decode().splitlines()[:5]
    wrong = [
        json.dumps({"task_id": f"HumanEval/{i}", "completion": "    return None\n"})
        for i in range(3)
    ]
    samples.write_text("\n".join(gold + wrong) + "\n")
    p = referee("verify", "--tasks", str(humaneval_file), "--samples", str(samples), "--json")
    assert p.returncode == 0, p.stderr
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert all({"task_id", "passed", "reward", "flags", "tests"} <= set(o) for o in out)
    assert [o["passed"] for o in out] == [True] * 5 + [False] * 3
    assert b"5 passed" in p.stderr


def test_verify_repository_tasks_with_model_patch(tmp_path):
    from referee.tasks.model import write_tasks
    from referee.verify.redteam_pytest import repository_tasks

    tasks = repository_tasks()
    write_tasks(tmp_path / "repo.jsonl", tasks)
    lines = [
        json.dumps({"task_id": t.id, "model_patch": t.hidden["reference_patch"]}) for t in tasks
    ]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    p = referee(
        "verify",
        "--tasks",
        str(tmp_path / "repo.jsonl"),
        "--samples",
        str(tmp_path / "s.jsonl"),
        "--json",
    )
    assert p.returncode == 0, p.stderr
    assert [json.loads(x)["passed"] for x in p.stdout.splitlines()] == [True, True, True]


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", b"not valid JSON"),
        ('{"task_id": "HumanEval/0"}', b"'completion'"),
        ('{"task_id": "nope", "completion": ""}', b"is not in"),
    ],
)
def test_verify_bad_samples_exit_2_naming_the_line(humaneval_file, tmp_path, line, message):
    samples = tmp_path / "bad.jsonl"
    samples.write_text(line + "\n")
    p = referee("verify", "--tasks", str(humaneval_file), "--samples", str(samples))
    assert p.returncode == 2 and message in p.stderr and b"bad.jsonl:1" in p.stderr


def test_tasks_generate(tmp_path):
    out = tmp_path / "gen.jsonl"
    p = referee("tasks", "generate", "recurrence", "--count", "5", "--out", str(out))
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in referee("tasks", "list", str(out), "--json").stdout.splitlines()]
    assert rows[0]["id"] == "proc/recurrence-d0-s0-v1" and len(rows) == 5
    assert {r["split"] for r in rows} == {"train"}  # without --heldout every task trains


def test_tasks_generate_heldout_makes_a_pool_train_accepts(tmp_path):
    from referee.experiments.listops.tasks import read_task_file
    from referee.tasks.split import check_split

    out = tmp_path / "gen.jsonl"
    p = referee("tasks", "generate", "list-ops", "--count", "12", "--heldout", "0.3",
                "--out", str(out))  # fmt: skip
    assert p.returncode == 0, p.stderr
    tasks = read_task_file(str(out))
    assert {t.split for t in tasks} == {"train", "heldout"}
    assert check_split(tasks, by="structure").ok


def test_demo_holds_every_expectation():
    from referee.demo import DEMO_EXPLOITS, HOSTILE_PROGRAMS

    p = referee("demo")
    assert p.returncode == 0, p.stderr[-2000:] + p.stdout[-2000:]
    # The demo's output is what it is for: on stdout (issue 20), and nothing in it cut.
    out = p.stdout.decode()
    assert "all expectations held" in out and "…" not in out
    for name in (*DEMO_EXPLOITS, *(h[0] for h in HOSTILE_PROGRAMS)):
        assert name in out, name


def test_synth_gold_verify_split_on_the_fixture_repository(tmp_path):
    fixture = Path(__file__).parent / "fixtures" / "minirepo"
    out = tmp_path / "mini.jsonl"
    p = referee(
        "synth", str(fixture), "--out", str(out), "--kinds", "bugfix,implement", "--limit", "4",
        "--store", f"file://{tmp_path}/store", "--json",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    # stderr is a pipe here: progress comes as plain lines, one per step, not silence.
    assert b"synth: baseline 1/1 (" in p.stderr and b"synth: bugfix 4/4 (" in p.stderr
    report = json.loads(p.stdout.splitlines()[-1])
    assert report["candidates"]["bugfix"] >= 4 and report["kept"]["bugfix"] >= 1
    assert set(report["kept"]) == {"bugfix", "implement"}
    assert report["test_s_per_kept_task"] > 0
    gold = referee("tasks", "gold", str(out))
    (tmp_path / "gold.jsonl").write_bytes(gold.stdout)
    v = referee("verify", "--tasks", str(out), "--samples", str(tmp_path / "gold.jsonl"), "--json")
    assert v.returncode == 0, v.stderr
    verdicts = [json.loads(x) for x in v.stdout.splitlines()]
    assert len(verdicts) == sum(report["kept"].values())
    assert all(x["passed"] for x in verdicts)
    split = referee("tasks", "split", str(out), "--json")
    assert split.returncode == 0 and json.loads(split.stdout)["leaks"] == {}


def test_synth_bad_source_exits_2(tmp_path):
    p = referee("synth", str(tmp_path / "nope"), "--out", str(tmp_path / "x.jsonl"))
    assert p.returncode == 2 and b"neither a folder nor pypi" in p.stderr
    p = referee("synth", str(tmp_path), "--out", str(tmp_path / "x.jsonl"), "--kinds", "rewrite")
    assert p.returncode == 2 and b"unknown task kinds" in p.stderr and b"refactor" in p.stderr


# ---- referee eval ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def eval_file(tmp_path_factory):
    """Two recorded procedural tasks, all in the train split (as `tasks generate` writes them)."""
    path = tmp_path_factory.mktemp("eval") / "gen.jsonl"
    p = referee(
        "tasks", "generate", "list-pipeline", "--count", "2", "--seed", "30", "--out", str(path)
    )
    assert p.returncode == 0, p.stderr
    return path


def _eval_tasks(path):
    from referee.tasks.model import read_tasks

    return read_tasks(path)


def _flat(stderr: bytes) -> str:
    return " ".join(stderr.decode().split())  # rich may wrap long lines


def test_eval_scripted_json_pass_at_1_and_pass_at_k(eval_file):
    first, _second = _eval_tasks(eval_file)
    spec = f"scripted:```python\n{first.hidden['reference']}```"  # right for the first task only
    p = referee(
        "eval", "--policy", spec, "--tasks", str(eval_file), "--split", "train", "--samples", "4",
        "--json",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.splitlines()[-1])
    assert out.pop("greedy_s") >= 0  # wall time of the greedy pass: not a fixed number
    assert out == {
        "tasks": 2,
        "split": "train",
        "pass_at_1": 0.5,
        "pass_at_k": {"1": 0.5, "2": 0.5, "4": 0.5},  # every power of two up to --samples
        "infra_errors": 0,
        "solved": [first.id],  # the task whose reference the scripted policy gives
        "completion_tokens": 0,  # a scripted policy reports no tokens
    }
    p = referee(
        "eval", "--policy", spec, "--tasks", str(eval_file), "--split", "all", "--limit", "1"
    )
    # The result line is the command's output, on stdout (QA finding 6; it was on stderr).
    assert p.returncode == 0 and b"pass@1" not in p.stderr
    assert "1 all tasks: pass@1 1.000; 0 infra errors" in _flat(p.stdout)


def test_eval_openai_against_a_server_on_loopback(eval_file):
    from tests.policy.fake_openai import CodeAnswer, FakeOpenAI

    first, _second = _eval_tasks(eval_file)
    with FakeOpenAI() as server:
        docstring = first.payload["code_prompt"].split('"""')[1]
        solution = first.payload["code_prompt"] + first.hidden["reference"]
        # Right when greedy and for seeds 0 and 1 of the 4 samples; the second task never.
        server.code_answers = {docstring: CodeAnswer(solution, seeds=frozenset({0, 1}))}
        p = referee(
            "eval", "--policy", f"openai:{server.url}#code-single", "--tasks", str(eval_file),
            "--split", "train", "--samples", "4", "--json",
        )  # fmt: skip
        requests = list(server.requests)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.splitlines()[-1])
    assert out["tasks"] == 2 and out["pass_at_1"] == 0.5 and out["infra_errors"] == 0
    # First task: 2 of 4 samples right (pass@1 0.5, pass@2 5/6, pass@4 1); second: 0. Mean
    # over both. pass@2 too (issue 20): every power of two up to --samples.
    assert out["pass_at_k"] == {
        "1": pytest.approx(0.25), "2": pytest.approx(5 / 12), "4": pytest.approx(0.5)
    }  # fmt: skip
    assert len(requests) == 2 + 2 * 4
    assert sorted(r.get("seed", -1) for r in requests) == [-1, -1, 0, 0, 1, 1, 2, 2, 3, 3]


@pytest.mark.parametrize(
    "spec, why",
    [
        ("nope", "expected KIND:VALUE"),
        ("openai:http://127.0.0.1:9/v1", "the model's name is missing"),
        ("openai:localhost:8000/v1#qwen", "not an http(s) URL"),
    ],
)
def test_eval_bad_policy_spec_exits_2_naming_the_accepted_forms(eval_file, spec, why):
    p = referee("eval", "--policy", spec, "--tasks", str(eval_file), "--split", "train")
    assert p.returncode == 2, p.stderr
    message = _flat(p.stderr)
    assert why in message and "accepted forms: openai:http://HOST:PORT/v1#MODEL" in message
    assert "scripted:TEXT" in message and "scripted:@FILE.json" in message


def test_eval_bad_policy_spec_message_keeps_the_local_form_whole(eval_file):
    p = referee("eval", "--policy", "nope", "--tasks", str(eval_file), "--split", "train")
    assert "local:PATH[#DEVICE]" in _flat(p.stderr)


def test_eval_local_policy_of_a_missing_folder_is_one_line_exit_2_offline(eval_file):
    # issue 20: not a hub id tried with retries for ~23 s; a model folder or a one-line refusal
    p = referee("eval", "--policy", "local:nope", "--tasks", str(eval_file), "--split", "train")
    assert p.returncode == 2, p.stderr
    lines = [line for line in p.stderr.decode().splitlines() if line.strip()]
    assert len(lines) == 1 and "'local:nope': nope does not exist" in lines[0], lines


def test_eval_split_without_tasks_exits_2(eval_file):
    p = referee("eval", "--policy", "scripted:x", "--tasks", str(eval_file))  # default: heldout
    assert p.returncode == 2
    assert f"{eval_file} has no tasks in split 'heldout'" in _flat(p.stderr)
    assert "(2 train); evaluate them with --split all" in _flat(p.stderr)
    p = referee("eval", "--policy", "scripted:x", "--tasks", str(eval_file), "--split", "test")
    assert p.returncode == 2 and "--split must be heldout, train or all" in _flat(p.stderr)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sampler", "greedy"], b"--sampler must be curriculum or uniform"),
        (["--prompt", "chat"], b"--prompt must be compact or code"),
        (["--env", "code-agent"], b"referee train runs code-single"),
    ],
)
def test_train_refuses_bad_options_before_doing_any_work(args, message):
    r = referee("train", *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_train_refuses_a_task_file_without_heldout_tasks(tmp_path):
    from referee.tasks.model import write_tasks
    from referee.tasks.procedural import generate

    path = tmp_path / "t.jsonl"
    write_tasks(path, [generate("list-ops", difficulty=0.0, seed=i) for i in range(3)])
    r = referee("train", "--task-file", str(path), "--run-dir", str(tmp_path / "run"))
    assert r.returncode == 2 and b"no held-out tasks" in r.stderr, r.stderr


def _listops_file(path, count=12, split="train"):
    from referee.tasks.model import write_tasks
    from referee.tasks.procedural import generate

    tasks = [generate("list-ops", difficulty=0.5, seed=i, split=split) for i in range(count)]
    write_tasks(path, tasks)
    return path


def test_train_refuses_an_all_heldout_task_file_naming_the_command(tmp_path):
    path = _listops_file(tmp_path / "he.jsonl", split="heldout")  # as `tasks import` writes
    r = invoke("train", "--task-file", str(path), "--run-dir", str(tmp_path / "run"))
    assert r.exit_code == 2, r.output
    out = _flat(r.output.encode())
    assert "has no training tasks" in out and f"referee tasks split {path} --heldout" in out
    assert not (tmp_path / "run").exists()  # refused before any work


def test_tasks_split_out_makes_a_file_train_accepts(tmp_path):
    from referee.experiments.listops.tasks import read_task_file
    from referee.tasks.model import read_tasks

    path = _listops_file(tmp_path / "t.jsonl", count=20)
    out = tmp_path / "split.jsonl"
    r = invoke("tasks", "split", str(path), "--heldout", "0.25", "--by", "structure",
               "--out", str(out), "--json")  # fmt: skip
    assert r.exit_code == 0, r.output
    report = json.loads(r.output.splitlines()[-1])
    assert report["leaks"] == {} and report["tasks"]["heldout"] >= 1 and report["tasks"]["train"]
    assert [t.id for t in read_tasks(out)] == [t.id for t in read_tasks(path)]
    assert len(read_task_file(str(out))) == 20  # referee train's check passes
    r = invoke("tasks", "split", str(path), "--heldout", "0.2")
    assert r.exit_code == 2 and "add --out FILE" in _flat(r.output.encode())
    r = invoke("tasks", "split", str(path), "--by", "file", "--out", str(tmp_path / "x.jsonl"))
    assert r.exit_code == 2 and "--by must be module, function or structure" in r.output
    assert not (tmp_path / "x.jsonl").exists()


def test_tasks_generate_and_import_refuse_a_bad_by_before_any_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("tasks", "generate", "list-ops", "--out", "x.jsonl", "--by", "file")
    assert r.exit_code == 2 and "--by must be" in r.output
    r = invoke("tasks", "import", "humaneval", "--out", "x.jsonl", "--split", "train",
               "--heldout", "0.2")  # fmt: skip
    assert r.exit_code == 2 and "not both" in r.output
    assert not list(tmp_path.iterdir())


# ---- one exit-code policy, numeric options -----------------------------------------------------


def invoke(*args: str):
    from typer.testing import CliRunner

    from referee.cli import app

    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["exec", "--timeout", "0", "--", "true"], "--timeout must be"),
        (["exec", "--timeout", "-1", "--", "true"], "--timeout must be"),
        (["exec", "--memory", "0", "--", "true"], "--memory must be"),
        (["tasks", "import", "humaneval", "--out", "x", "--augment", "-1"], "--augment"),
        (["tasks", "generate", "recurrence", "--out", "x", "--count", "0"], "--count"),
        (["tasks", "generate", "recurrence", "--out", "x", "--difficulty", "1.5"], "--difficulty"),
        (["tasks", "generate", "recurrence", "--out", "x", "--difficulty", "-0.1"], "--difficulty"),
        (["synth", ".", "--out", "x", "--limit", "0"], "--limit"),
        (["synth", ".", "--out", "x", "--heldout", "1"], "--heldout"),
        (["synth", ".", "--out", "x", "--heldout", "-0.5"], "--heldout"),
        (["verify", "--tasks", "t", "--samples", "s", "--workers", "0"], "--workers"),
        (["eval", "--policy", "p", "--tasks", "t", "--samples", "-1"], "--samples"),
        (["eval", "--policy", "p", "--tasks", "t", "--limit", "0"], "--limit"),
        (
            ["export", "--run", "r", "--format", "jsonl", "--out", "o", "--min-reward", "1.5"],
            "--min-reward",
        ),
        (["audit", "--run", "r", "--random-share", "2"], "--random-share"),
        (["audit", "--run", "r", "--max-random", "-1"], "--max-random"),
        (["ui", "--run", "r", "--port", "0"], "--port"),
        (["ui", "--run", "r", "--port", "65536"], "--port"),
    ],
)
def test_numeric_options_out_of_range_exit_2_naming_the_option(tmp_path, monkeypatch, args, named):
    from referee.errors import EXEC_FAILED

    monkeypatch.chdir(tmp_path)  # where the relative --out, --run... would be written
    r = invoke(*args)
    assert r.exit_code == (EXEC_FAILED if args[0] == "exec" else 2), r.output
    assert named in _flat(r.output.encode()), r.output
    assert not list(tmp_path.iterdir())  # refused before doing any work


def test_tasks_import_looks_the_source_up_in_the_registry():
    r = invoke("tasks", "import", "nosuch", "--out", "x.jsonl")
    assert r.exit_code == 2
    line = _flat(r.output.encode())
    assert "referee: unknown task source 'nosuch'; available: " in line
    available = line.split("available: ", 1)[1].split(", ")
    assert "apps" in available and available == sorted(available), line
    assert "humaneval" in _flat(invoke("tasks", "import", "--help").output.encode())


def test_one_error_line_and_the_code_from_the_policy(tmp_path):
    from referee.errors import NotFoundError, exit_code_for

    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    r = invoke("tasks", "stats", str(bad))  # a TaskError: the user fixes the file
    assert r.exit_code == 2 and r.output.startswith(f"referee: {bad}:1: not valid JSON")
    assert len(r.output.strip().splitlines()) == 1
    r = invoke("export", "--run", str(tmp_path / "none"), "--format", "jsonl", "--out", "o.jsonl")
    assert r.exit_code == exit_code_for(NotFoundError("x")) == 2


def test_tasks_import_heldout_splits_the_imported_tasks(tmp_path, monkeypatch):
    import referee.verify.record as record
    from referee.tasks.model import read_tasks
    from referee.tasks.procedural import generate

    def fake_import(source, *, split, augment):  # the sandbox's recording is not under test
        tasks = [generate("recurrence", difficulty=0.5, seed=i, split=split) for i in range(10)]
        return [t.revised(hidden={**t.hidden, "inputs": []}) for t in tasks]

    monkeypatch.setattr(record, "import_recorded", fake_import)
    out = tmp_path / "he.jsonl"
    r = invoke("tasks", "import", "humaneval", "--out", str(out), "--heldout", "0.3")
    assert r.exit_code == 0, r.output
    splits = [t.split for t in read_tasks(out)]
    assert "train" in splits and "heldout" in splits
    assert f"{splits.count('train')} train, {splits.count('heldout')} held out" in r.output
    r = invoke("tasks", "import", "humaneval", "--out", str(out))  # default: all held out
    assert {t.split for t in read_tasks(out)} == {"heldout"}


def test_exec_status_line_keeps_the_violations_and_no_trailing_space():
    # issue 20 (20): "[timeout]" was read as markup: the line ended "ms " with the reason lost.
    p = referee("exec", "--timeout", "0.5", "--", "sleep", "3")
    assert p.returncode == 124
    last = p.stderr.decode().splitlines()[-1]
    assert last.startswith("referee: timed out in ") and last.endswith(" ms [timeout]"), last


def test_synth_errors_are_one_line_and_heldout_help_agrees_with_its_check(tmp_path):
    # issue 20 (17): help said [0.0<=x<=1.0] yet 1 was refused; errors came after a stray
    # "synth: intake 0/1" line (a bad source) or a blank line (a bad --heldout).
    out = str(tmp_path / "x.jsonl")
    for args, message in (
        ([str(tmp_path / "nope")], "neither a folder nor pypi"),
        (["pypi:toolz"], "pin the version"),
        ([str(tmp_path), "--heldout", "1"], "--heldout must be at least 0 and below 1"),
    ):
        p = referee("synth", *args, "--out", out)
        assert p.returncode == 2, p.stderr
        assert p.stderr.decode().splitlines() == [p.stderr.decode().strip()], p.stderr
        assert p.stderr.startswith(b"referee: ") and message.encode() in p.stderr
    shown = _flat(referee("synth", "--help").stdout)
    assert "below 1" in shown and "x<=1.0" not in shown
