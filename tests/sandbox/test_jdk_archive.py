"""The CDS archive of the JDK classes programs load: built once and then found, left out where it
cannot be built, and used inside the sandbox by a Java answer's run (its JDK classes come from
the archive, the answer's own class from its workspace)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from referee.sandbox.jdk_archive import jdk_archive
from referee.sandbox.toolchains import TOOLCHAIN_MOUNT, find_toolchain

JAVAC = shutil.which("javac")
pytestmark = pytest.mark.skipif(JAVAC is None, reason="no JDK: apt-get install openjdk-17-jdk")
FLAGS = ("-XX:+UseSerialGC", "-XX:-UsePerfData")


def _java() -> Path:
    assert JAVAC is not None
    return Path(JAVAC).resolve().with_name("java")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    cache = tmp_path_factory.mktemp("jdk-cds")
    archive = jdk_archive(_java(), FLAGS, cache=cache)
    assert archive is not None and archive.is_file() and archive.parent == cache
    return cache, archive


def test_it_is_built_once_then_found(built):
    cache, archive = built
    before = archive.stat().st_mtime_ns
    assert jdk_archive(_java(), FLAGS, cache=cache) == archive
    assert archive.stat().st_mtime_ns == before
    assert [p.name for p in cache.iterdir()] == [archive.name]  # no build folder left behind
    # Other flags are another archive (an archive holds the flags it was made with).
    assert jdk_archive(_java(), ("-XX:+UseSerialGC",), cache=cache) not in (None, archive)


def test_none_where_it_cannot_be_built(tmp_path):
    assert jdk_archive(tmp_path / "no-jdk" / "java", FLAGS, cache=tmp_path) is None
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert jdk_archive(_java(), FLAGS, cache=blocked / "cache") is None


def test_a_java_answer_loads_the_jdk_classes_from_the_archive_in_the_sandbox():
    from referee.verify.program import program_sandbox
    from referee.verify.program.build import Build, build_program
    from referee.verify.program.execute import case_limits, memory_by_address_space
    from referee.verify.program.redteam import GOLD

    tc = find_toolchain("java")
    archive = f"-XX:SharedArchiveFile={TOOLCHAIN_MOUNT}/jdk-cds.jsa"
    assert archive in tc.run_command(128), "the toolchain runs without the archive"
    with program_sandbox(python_workers=1) as sb:
        build = build_program(sb, "java", GOLD["java"])
        assert isinstance(build, Build)
        limits = case_limits(build, 5.0, 128, 1 << 20, address_space=memory_by_address_space(sb))
        argv = tc.run_command(128, build.main)
        # -Xshare:on: the JVM refuses to start rather than run without the archive.
        argv[1:1] = ["-Xshare:on", "-Xlog:class+load:stdout"]
        r = sb.run_python(
            f"import os\nos.execv({argv[0]!r}, {json.dumps(argv)})\n",
            name="_exec.py",
            files=build.files,
            stdin=b"3\n1 2 3\n",
            limits=limits.with_(stdout_bytes=1 << 22),
        )
    assert r.exit_code == 0, r.stderr
    loads = [ln for ln in r.stdout.splitlines() if "[class,load]" in ln]
    scanner = next(ln for ln in loads if " java.util.Scanner " in ln)
    assert "source: shared objects file" in scanner
    main = next(ln for ln in loads if " Main " in ln)
    assert "source: file:/workspace/" in main
    assert "6" in r.stdout.splitlines()  # the answer, among the log lines


def test_javac_has_an_archive_of_its_own_and_compiles_with_it_in_the_sandbox():
    from referee.sandbox import Sandbox
    from referee.sandbox.cputime import cpu_limits

    tc = find_toolchain("java")
    own = f"-J-XX:SharedArchiveFile={TOOLCHAIN_MOUNT}/javac-cds.jsa"
    argv = tc.compile_command("Main.java")
    assert own in argv, "javac runs without its archive"
    argv[1:1] = ["-J-Xshare:on"]  # refuse to start without it
    with Sandbox(toolchains=("java",)) as sb, sb.workspace() as ws:
        r = sb.run(
            argv,
            files={"Main.java": "public class Main{public static void main(String[] a){}}\n"},
            workspace=ws,
            limits=cpu_limits(60, memory_mb=1024, max_processes=64),
            env=dict(tc.env),
        )
        assert r.exit_code == 0, r.stderr
        assert "Main.class" in ws.read_all()


def test_a_cleared_cache_is_rebuilt_rather_than_failing_the_sandbox(tmp_path, monkeypatch):
    from referee.sandbox import jdk_archive as module
    from referee.sandbox import toolchains

    monkeypatch.setattr(module, "CACHE", tmp_path)
    toolchains._find.cache_clear()
    try:
        archives = [Path(h) for h, _ in find_toolchain("java").binds if h.endswith(".jsa")]
        assert len(archives) == 2 and all(a.parent == tmp_path for a in archives)
        archives[0].unlink()  # someone clears ~/.cache while the process lives
        again = [Path(h) for h, _ in find_toolchain("java").binds if h.endswith(".jsa")]
        assert again == archives and all(a.is_file() for a in again)
    finally:
        toolchains._find.cache_clear()
