"""Bytecode made on the host: what pytest and Python would have made in the sandbox, and never
used for a file whose source changed."""

import marshal

from referee.verify.bytecode import BytecodeCache, is_test_module
from referee.verify.pytest_verifier import strip_bytecode
from referee.verify.repo_run import run_pytest

MODULE = "def double(x):\n    return 2 * x\n"
TESTS = (
    "from pkg.mod import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
    "def test_message():\n    assert double(3) == 7, 'three'\n"
)
FILES = {"pkg/__init__.py": "", "pkg/mod.py": MODULE, "tests/test_mod.py": TESTS}


def _code(pyc: bytes):  # type: ignore[no-untyped-def]
    return marshal.loads(pyc[16:])


def test_which_files_pytest_rewrites():
    assert is_test_module("a/test_x.py") and is_test_module("x_test.py")
    assert is_test_module("tests/conftest.py")
    assert not is_test_module("pkg/mod.py") and not is_test_module("tests/helpers.py")


def test_host_bytecode_equals_what_the_sandbox_compiles(repo_sandbox):
    made = BytecodeCache().pycs(FILES)
    with repo_sandbox.lease() as lease:
        lease.workspace.write(FILES)
        run = run_pytest(repo_sandbox, lease.workspace, ["tests"], lease=lease)
        assert run.status("tests/test_mod.py::test_double") == "passed", run.exec
        assert run.status("tests/test_mod.py::test_message") == "failed"
        written = {path: lease.workspace.read(path) for path in made}
    for path, pyc in made.items():
        assert written[path][:4] == pyc[:4], path  # the same interpreter's magic number
        ours, theirs = _code(pyc), _code(written[path])
        assert ours == theirs and ours.co_filename == theirs.co_filename, path
    test_pyc = next(p for p in made if "-pytest-" in p)
    assert written[test_pyc][:16] == made[test_pyc][:16]  # pytest's checked-hash header


def test_a_changed_source_never_runs_the_old_bytecode(repo_sandbox):
    pycs = BytecodeCache().pycs(FILES)
    broken = {"pkg/mod.py": MODULE.replace("2 * x", "3 * x")}
    fixed_tests = {"tests/test_mod.py": TESTS.replace("== 7", "== 6")}
    with repo_sandbox.lease() as lease:
        lease.workspace.write({**FILES, **pycs, **broken, **fixed_tests})
        run = run_pytest(repo_sandbox, lease.workspace, ["tests"], lease=lease)
    # Both edited files ran as edited: double is now 3 * x, and the edited assert holds.
    assert run.status("tests/test_mod.py::test_double") == "failed", run.exec
    assert run.status("tests/test_mod.py::test_message") == "failed"  # 9 != 6
    with repo_sandbox.lease() as lease:
        lease.workspace.write({**FILES, **pycs, **fixed_tests})
        run = run_pytest(repo_sandbox, lease.workspace, ["tests"], lease=lease)
    assert run.status("tests/test_mod.py::test_message") == "passed", run.exec


def test_a_file_that_does_not_compile_gets_no_bytecode():
    assert BytecodeCache().pycs({"pkg/bad.py": "def (:\n", "pkg/nul.py": "x = 1\x00\n"}) == {}


def test_the_cache_keeps_the_most_recent_within_its_bound():
    one = len(next(iter(BytecodeCache().pycs({"m0.py": "X = 0\n"}).values())))
    cache = BytecodeCache(max_bytes=int(one * 2.5))
    for i in range(5):
        assert cache.pycs({f"m{i}.py": f"X = {i}\n"})
    assert len(cache) == 2


def test_strip_bytecode_removes_caches_and_nothing_else(repo_sandbox, tmp_path):
    with repo_sandbox.lease() as lease:
        ws = lease.workspace
        ws.write({**FILES, "pkg/__pycache__/mod.cpython-311.pyc": b"x", "legacy.pyc": b"y"})
        (ws.root / "tests" / "__pycache__").symlink_to(tmp_path)
        (tmp_path / "keep.txt").write_text("outside")
        removed = strip_bytecode(ws)
        assert sorted(removed) == ["legacy.pyc", "pkg/__pycache__", "tests/__pycache__"]
        assert sorted(ws.read_all()) == sorted(FILES)
    assert (tmp_path / "keep.txt").read_text() == "outside"  # a link is removed, not followed


def test_a_second_process_reads_the_pycs_from_disk_and_never_a_bad_one(tmp_path):
    first = BytecodeCache(directory=tmp_path).pycs(FILES)
    stored = sorted(tmp_path.rglob("*.pyc"))
    assert len(stored) == len(first) == 3  # pkg/__init__.py, pkg/mod.py, tests/test_mod.py
    again = BytecodeCache(directory=tmp_path)  # a new process: nothing in memory
    assert again.pycs(FILES) == first
    # A file there that is torn, or another source's, is not used: the pyc is made again.
    for file in stored:
        file.write_bytes(file.read_bytes()[:30])
    changed = {**FILES, "pkg/mod.py": MODULE.replace("2 * x", "5 * x")}
    made = BytecodeCache(directory=tmp_path).pycs(changed)
    fresh = BytecodeCache().pycs(changed)
    assert made.keys() == fresh.keys()
    for path, pyc in made.items():
        assert pyc[:16] == fresh[path][:16] and _code(pyc) == _code(fresh[path]), path
    assert (
        made["pkg/__pycache__/mod.cpython-311.pyc"] != first["pkg/__pycache__/mod.cpython-311.pyc"]
    )
