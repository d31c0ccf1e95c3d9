"""Toolchains: found on this machine, their directories bound read-only into the sandbox, and
a compiler run in the sandbox sees the sandbox's files, not the host's."""

from __future__ import annotations

import pytest

from referee.errors import ConfigError
from referee.sandbox import Limits
from referee.sandbox.toolchains import LANGUAGES, available_toolchains, find_toolchain


def test_every_language_has_a_toolchain_here():
    found = available_toolchains()
    assert list(found) == list(LANGUAGES), "install the missing ones: make bootstrap"
    for lang, tc in found.items():
        assert tc.language == lang and tc.version != "unknown"
        assert tc.compiled == (lang not in ("python", "javascript"))


def test_an_unknown_language_names_the_known_ones():
    with pytest.raises(ConfigError, match="python, c, cpp"):
        find_toolchain("cobol")


def test_rust_outside_usr_is_mounted_under_opt_toolchains():
    rust = find_toolchain("rust")
    for host, dest in rust.binds:
        assert dest.startswith("/opt/toolchains/") or host == dest
    assert rust.compile_command("main.rs")[-1] == "main.rs"


def test_the_sandbox_sees_the_toolchains_read_only(program_sb):
    r = program_sb.run(
        ["sh", "-c", "ls /usr/include/stdio.h && touch /usr/include/x 2>&1; echo $?"],
        limits=Limits(timeout_s=10),
    )
    assert r.stdout.startswith("/usr/include/stdio.h\n") and r.stdout.rstrip().endswith("1"), r


def test_a_compiler_includes_only_the_sandboxes_files(program_sb):
    cpp = program_sb.toolchains["cpp"]
    with program_sb.workspace() as ws:
        r = program_sb.run(
            cpp.compile_command("main.cpp"),
            files={"main.cpp": 'const char* s =\n#include "/etc/passwd"\n;\nint main(){}\n'},
            workspace=ws,
            limits=Limits(timeout_s=30, memory_mb=1024),
        )
    assert r.exit_code != 0
    # the sandbox's own /etc/passwd (root has no shell there), not the host's
    assert "root:x:0:0:root:/root:/usr/sbin/nologin" in r.stderr
    assert "/bin/bash" not in r.stderr


def test_rusts_sysroot_is_there_but_not_the_home_directory_it_came_from(program_sb):
    r = program_sb.run(
        ["sh", "-c", "ls -d /root /home/* 2>&1; ls /opt/toolchains/rust/bin"],
        limits=Limits(timeout_s=10),
    )
    assert "'/root': No such file" in r.stdout and "rustc" in r.stdout, r.stdout
