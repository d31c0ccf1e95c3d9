"""The grader-owned pytest runner: runs inside the sandbox as ``python3 -I -c <this file>``.

Arguments arrive as one JSON object in ``argv[1]``: ``nonce``, ``ids`` (test node ids to run).
It starts pytest with every way a repository could change the outcome switched off: no
configuration file of the repository (``-c /dev/null``), no ``conftest.py`` (``--noconftest``),
no plugin autoloading, no cache, empty ``addopts``; the grader's own plugin records every test's
setup, call and teardown and emits one frame per test on fd 1 (``\\x1eREF <nonce> <json>``).
"""

import json
import os
import sys

sys.path.insert(0, "/opt/packages")
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
os.environ.pop("PYTEST_ADDOPTS", None)

_ARGS = json.loads(sys.argv[1])
_PREFIX = ("\x1eREF " + _ARGS["nonce"] + " ").encode()
_write = os.write


def _emit(obj):
    data = b"\n" + _PREFIX + json.dumps(obj).encode() + b"\n"  # own line, whatever came before
    while data:
        data = data[_write(1, data) :]


class GraderPlugin:
    def __init__(self):
        self.state = {}

    def pytest_collection_finish(self, session):
        _emit({"collected": [item.nodeid for item in session.items]})

    def pytest_runtest_logreport(self, report):
        st = self.state.setdefault(report.nodeid, {})
        if hasattr(report, "wasxfail"):
            st[report.when] = "xfail"
        else:
            st[report.when] = report.outcome
        if report.when == "teardown":
            _emit({"test": report.nodeid, "phases": st})


def main():
    import pytest

    # No candidate code has run yet: from here on, a missing report is the candidate's doing,
    # before here it is the grader's (pytest could not even be imported).
    _emit({"ready": True})
    # The repository root is importable, as with `python -m pytest` run from it.
    sys.path.insert(1, "/workspace")
    args = [
        "-q",
        "-c",
        "/dev/null",
        "--rootdir",
        "/workspace",
        "--noconftest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:stepwise",
        "-o",
        "addopts=",
        "-o",
        "python_files=test_*.py *_test.py",
        "--import-mode=prepend",
        *_ARGS["ids"],
    ]
    code = pytest.main(args, plugins=[GraderPlugin()])
    _emit({"done": int(code)})


main()
