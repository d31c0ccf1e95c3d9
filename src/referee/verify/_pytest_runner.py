"""The grader-owned pytest runner: runs inside the sandbox as ``python3 -I -c <this file>``.

Arguments arrive as one JSON object in ``argv[1]``:

* ``nonce``: the frame prefix; ``ids``: test node ids or test files to run;
* ``paths`` (optional): extra ``sys.path`` entries, before the workspace (a repository's
  ``src/`` folder, its dependencies at ``/opt/paths/<i>``);
* ``conftests`` (optional): the repository's own ``conftest.py`` files (restored pristine by the
  verifier). When given, every other ``conftest.py`` in the workspace is deleted before pytest
  starts and these are allowed, so the fixtures a real suite needs keep working and a
  candidate's conftest never loads; without it no ``conftest.py`` loads at all;
* ``variants`` (optional, synthesis only): a list of ``{"id", "files", "ids"}``. pytest is
  imported once; each variant's files are written over the workspace, a forked child runs its
  tests (frames carry ``"variant"``), then the original files are put back. This is how the
  mutants of one repository are validated without paying interpreter and pytest start-up for
  each; candidate solutions never use it (each gets its own sandbox run);
* ``coverage`` (optional): a list of folders to measure; then every test runs in its own
  coverage context and a final frame maps each function (``path::Qualified.name``) to the tests
  that executed its body;
* ``tb`` (optional): pytest's traceback style (``--tb``), "auto" when absent. Synthesis runs
  its states with "native": pytest's long style re-reads and formats the source of every frame
  of every failure, and a mutant fails dozens of tests (about two thirds of a state's time on
  cachetools); Python's own traceback carries the same failing line and assertion message.

pytest starts with every other way a repository could change the outcome switched off: no
configuration file of the repository (``-c /dev/null``), no plugin autoloading, no cache, empty
``addopts``. The grader's own plugin records every test's setup, call and teardown and emits one
frame per test on fd 1 (``\\x1eREF <nonce> <json>``), with its duration and, for a failure, the
tail of pytest's report (what a developer would read; the synthesis prompts quote it).
"""

import json
import os
import random
import sys

sys.path.insert(0, "/opt/packages")
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
os.environ.pop("PYTEST_ADDOPTS", None)

# The arguments come in argv[1], or on stdin when argv[1] is "-" (variants can be megabytes).
_ARGS = json.loads(sys.stdin.read() if sys.argv[1] == "-" else sys.argv[1])
# Bytecode caches are kept (test files are compiled and assertion-rewritten once for all
# variants), but variants rewrite source files in place, often at the same size: each written
# file gets an mtime of its own (see _run_variants), so a cache keyed on (mtime, size) of another
# variant never matches.
_PREFIX = ("\x1eREF " + _ARGS["nonce"] + " ").encode()
_write = os.write
# Frames go to a copy of the original stdout: pytest's capture redirects fd 1 while a test runs,
# and a frame emitted from inside a test (a budget's alarm) must still reach the grader.
_OUT = os.dup(1)
_REPORT_CHARS = 1500
_RANK = {"passed": 0, "xfail": 1, "skipped": 1, "failed": 2}


_TAG = {}


def _now():
    import time

    return time.monotonic()


def _emit(obj):
    obj = {**obj, **_TAG}
    data = b"\n" + _PREFIX + json.dumps(obj).encode() + b"\n"  # own line, whatever came before
    while data:
        data = data[_write(_OUT, data) :]


class GraderPlugin:
    def __init__(self, cov, budgets=None, collect_budget=None):
        self.state = {}
        self.cov = cov
        self.budgets = budgets or {}
        self.started = _now()
        self.collect_budget = collect_budget
        if collect_budget:
            # Synthesis only: a mutant can hang before any test runs (module-level code at
            # import, or collection); no per-test budget covers that time, so it has its own.
            import signal

            def expired(signum, frame):
                _emit({"variant_timeout": True, "slow_test": "<collection>"})
                os._exit(3)

            signal.signal(signal.SIGALRM, expired)
            signal.setitimer(signal.ITIMER_REAL, collect_budget)

    def pytest_runtest_protocol(self, item, nextitem):
        # Synthesis only: a test that runs far past its baseline time ends the whole variant at
        # once (the candidate is rejected for the timeout anyway), instead of at the deadline.
        budget = self.budgets.get(item.nodeid)
        if budget:
            import signal

            def expired(signum, frame):
                _emit({"variant_timeout": True, "slow_test": item.nodeid})
                os._exit(3)

            signal.signal(signal.SIGALRM, expired)
            signal.setitimer(signal.ITIMER_REAL, budget)

    def pytest_collection_finish(self, session):
        if self.collect_budget:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
        _emit(
            {
                "collected": [item.nodeid for item in session.items],
                "collect_s": _now() - self.started,
            }
        )

    def pytest_runtest_setup(self, item):
        # Every test starts from the same random state, as pytest-randomly does: a test whose
        # outcome depends on `random` (a random-replacement cache, a shuffled input) then
        # behaves the same in validation and in every later verification.
        random.seed(0)
        if self.cov is not None:
            self.cov.switch_context(item.nodeid)

    def pytest_runtest_logfinish(self, nodeid, location):
        if self.budgets:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)

    def pytest_runtest_logreport(self, report):
        st = self.state.setdefault(report.nodeid, {"phases": {}, "duration": 0.0})
        outcome = "xfail" if hasattr(report, "wasxfail") else report.outcome
        # A phase can be reported several times (each unittest subTest reports its own call):
        # the worst outcome stands, so a failing subtest fails the test whatever comes after.
        seen = st["phases"].get(report.when)
        if seen is None or _RANK.get(outcome, 2) > _RANK.get(seen, 2):
            st["phases"][report.when] = outcome
        st["duration"] += float(getattr(report, "duration", 0.0) or 0.0)
        if report.failed and "report" not in st:
            try:
                text = str(report.longreprtext)
            except Exception:
                text = ""
            if _ARGS.get("tb") == "native":
                text = _without_grader_frames(text)
            st["report"] = text[-_REPORT_CHARS:]
        if report.when == "teardown":
            _emit({"test": report.nodeid, **st})
            if self.cov is not None:
                self.cov.switch_context("")


def _without_grader_frames(text):
    """A native traceback without the frames of pytest and pluggy (the grader's packages): what
    is left is the test's and the repository's own frames, as a developer would read them."""
    out, skipping = [], False
    for line in text.splitlines():
        if line.startswith('  File "'):
            skipping = line.startswith('  File "/opt/packages/')
        elif not line.startswith("    "):
            skipping = False
        if not skipping:
            out.append(line)
    return "\n".join(out)


def _function_spans(path):
    """(first body line, last line, qualified name) of every function in ``path``."""
    import ast

    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return []
    spans = []

    def walk(node, prefix, in_def):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                spans.append((child.body[0].lineno, child.end_lineno, name))
                walk(child, name + ".", True)
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".", in_def)
            else:
                walk(child, prefix, in_def)

    walk(tree, "", False)
    # Innermost first, so that a nested function's lines belong to it and not its parent.
    spans.sort(key=lambda s: s[1] - s[0])
    return spans


def _coverage_frame(cov):
    """Per function: the tests that ran its body, and per line the tests that ran that line
    (index -1: the line ran outside any test, at import or collection time)."""
    data = cov.get_data()
    contexts, index, functions, lines = [], {}, {}, {}
    for path in sorted(data.measured_files()):
        if not path.startswith("/workspace/"):
            continue
        rel = path[len("/workspace/") :]
        spans = _function_spans(path)
        by_line = data.contexts_by_lineno(path)
        for line, ctxs in by_line.items():
            owner = next((name for lo, hi, name in spans if lo <= line <= hi), None)
            if owner is None:
                continue
            key = rel + "::" + owner
            bucket = functions.setdefault(key, set())
            here = lines.setdefault(key, {}).setdefault(str(line), set())
            for ctx in ctxs:
                if not ctx:
                    here.add(-1)
                    continue
                if ctx not in index:
                    index[ctx] = len(contexts)
                    contexts.append(ctx)
                bucket.add(index[ctx])
                here.add(index[ctx])
    return {
        "coverage": {
            "contexts": contexts,
            "functions": {k: sorted(v) for k, v in functions.items()},
            "lines": {k: {ln: sorted(v) for ln, v in d.items()} for k, d in lines.items()},
        }
    }


def _prune_conftests(allowed):
    for folder, _dirs, names in os.walk("/workspace"):
        if "conftest.py" in names:
            path = os.path.join(folder, "conftest.py")
            if path[len("/workspace/") :] not in allowed:
                os.unlink(path)


_stamp = [1000]


def _run_variants(pytest, base_args):
    import gc
    import signal
    import time

    # One empty session first: pytest imports its plugins and builds its machinery here, once,
    # and every variant's fork starts with them loaded (about half of a small run's cost).
    os.makedirs("/tmp/referee-warmup", exist_ok=True)
    pytest.main([*base_args, "--collect-only", "/tmp/referee-warmup"], plugins=[])
    for variant in _ARGS["variants"]:
        originals = {}
        for rel, text in variant["files"].items():
            path = "/workspace/" + rel
            try:
                with open(path, "rb") as f:
                    originals[path] = f.read()
            except FileNotFoundError:
                originals[path] = None
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            _stamp[0] += 1
            os.utime(path, (_stamp[0], _stamp[0]))  # 1970 + n seconds: unique per write
        start = time.monotonic()
        # The warm parent's objects are permanent: children neither scan nor copy them in GC.
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            _TAG["variant"] = variant["id"]
            try:
                stop = [f"--maxfail={variant['maxfail']}"] if variant.get("maxfail") else []
                plugin = GraderPlugin(None, variant.get("budgets"), variant.get("collect_budget_s"))
                code = pytest.main([*base_args, *stop, *variant["ids"]], plugins=[plugin])
                _emit({"variant_done": int(code)})
            finally:
                os._exit(0)
        deadline = start + float(variant.get("timeout_s", 60))
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                _emit({"variant": variant["id"], "variant_timeout": True})
                break
            time.sleep(0.002)
        _emit({"variant": variant["id"], "variant_wall_s": time.monotonic() - start})
        for path, data in originals.items():
            if data is None:
                os.unlink(path)
            else:
                with open(path, "wb") as f:
                    f.write(data)
                _stamp[0] += 1
                os.utime(path, (_stamp[0], _stamp[0]))


def main():
    import pytest

    allowed = _ARGS.get("conftests")
    if allowed is not None:
        _prune_conftests(set(allowed))

    cov = None
    if _ARGS.get("coverage"):
        import coverage

        cov = coverage.Coverage(
            data_file=None,
            config_file=False,
            source=["/workspace/" + p if p else "/workspace" for p in _ARGS["coverage"]],
        )
    # No candidate code has run yet: from here on, a missing report is the candidate's doing,
    # before here it is the grader's (pytest could not even be imported).
    _emit({"ready": True})
    # The repository root is importable, as with `python -m pytest` run from it; source roots
    # (a src/ layout) and the repository's dependencies come first.
    for i, p in enumerate(_ARGS.get("paths", [])):
        sys.path.insert(1 + i, p)
    sys.path.insert(1 + len(_ARGS.get("paths", [])), "/workspace")
    args = [
        "-q",
        "-c",
        "/dev/null",
        "--rootdir",
        "/workspace",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:stepwise",
        # Plugins that cannot change an outcome here but cost each run time: the last two call
        # gc.collect() repeatedly at exit (a third of a small forked run).
        *("-p", "no:pastebin", "-p", "no:junitxml", "-p", "no:doctest"),
        *("-p", "no:setuponly", "-p", "no:setupplan", "-p", "no:faulthandler"),
        *("-p", "no:unraisableexception", "-p", "no:threadexception"),
        "-o",
        "addopts=",
        "-o",
        "python_files=test_*.py *_test.py",
        "--import-mode=prepend",
        "--tb=" + _ARGS.get("tb", "auto"),
        *([] if allowed is not None else ["--noconftest"]),
        *_ARGS["ids"],
    ]
    if _ARGS.get("variants"):
        _run_variants(pytest, args[: -len(_ARGS["ids"])] if _ARGS["ids"] else args)
        _emit({"done": 0})
        return
    if cov is not None:
        cov.start()
    code = pytest.main(args, plugins=[GraderPlugin(cov)])
    if cov is not None:
        cov.stop()
        _emit(_coverage_frame(cov))
    _emit({"done": int(code)})


main()
