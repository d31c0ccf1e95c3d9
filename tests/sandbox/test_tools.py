"""Every declared shell tool resolves and does its job inside the sandbox, on every backend: a
fresh bubblewrap run (what `referee exec` takes), a program on the fork server that starts it,
and the unisolated local backend. A tool the host lacks is skipped with the reason (pytest -ra
prints it), never passed over in silence."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.sandbox import Limits, Sandbox
from referee.sandbox.local import UnsafeBackendWarning
from referee.sandbox.tools import (
    SHELL_TOOLS,
    ShellTool,
    ToolCheck,
    check_tools,
    judge,
    on_host,
    parse_probe,
    probe_script,
)
from referee.sandbox.view import alternatives, share_links

BACKENDS = ("fresh", "fork", "local")

_FORK_RUNNER = """\
import subprocess, sys
sys.exit(subprocess.run(["sh", "probe.sh"]).returncode)
"""


@pytest.fixture(scope="module")
def local_sb() -> Iterator[Sandbox]:
    with pytest.warns(UnsafeBackendWarning):
        sb = Sandbox(backend="local")
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def probed(
    sandbox: Sandbox, local_sb: Sandbox
) -> dict[str, dict[str, tuple[int | None, str, str]]]:
    """Each backend's probe of all the tools: one run per backend, read by every test below."""
    script = {"probe.sh": probe_script()}
    limits = Limits(timeout_s=120, memory_mb=512)
    runs = {
        "fresh": sandbox.run(["sh", "probe.sh"], files=script, limits=limits),
        "fork": sandbox.run_python(_FORK_RUNNER, files=script, limits=limits),
        "local": local_sb.run(["sh", "probe.sh"], files=script, limits=limits),
    }
    for backend, r in runs.items():
        assert r.exit_code == 0, f"{backend}: the probe script failed: {r.summary()} {r.stderr}"
    return {backend: parse_probe(r.stdout) for backend, r in runs.items()}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tool", SHELL_TOOLS, ids=lambda t: t.name)
def test_the_tool_resolves_and_runs(tool: ShellTool, backend: str, probed) -> None:
    if not on_host(tool):
        kind = "a base Debian tool" if tool.base else "optional"
        pytest.skip(
            f"{tool.name} ({kind}) is not in this host's /usr/bin: apt-get install {tool.package}"
        )
    check = judge(tool, probed[backend].get(tool.name))
    assert check.ok, f"{backend}: {check.line()}"


def test_awk_from_the_issue_exits_0_not_127(sandbox: Sandbox) -> None:
    r = sandbox.run(["sh", "-c", "awk 1 /dev/null; echo $?"], limits=Limits(timeout_s=30))
    assert r.stdout == "0\n", r.stderr


def test_the_declared_list_covers_the_issues_commands() -> None:
    names = [t.name for t in SHELL_TOOLS]
    assert len(names) == len(set(names))
    issue = "ls cat cp mv rm mkdir head tail sort uniq wc cut tr tee date env printf awk sed grep "
    issue += "egrep find xargs tar gzip gunzip bzip2 xz diff patch bc which file"
    assert set(issue.split()) <= set(names)


def test_check_tools_reports_each_tool(sandbox: Sandbox) -> None:
    checks = check_tools(sandbox)
    assert [c.tool for c in checks] == list(SHELL_TOOLS)
    bad = [c.line() for c in checks if c.status == "broken"]
    assert bad == []


def test_a_broken_or_missing_tool_is_named_with_what_to_do() -> None:
    awk = next(t for t in SHELL_TOOLS if t.name == "awk")
    line = judge(awk, (127, "", "sh: 1: awk: not found")).line()
    assert line.startswith("awk: fails in the sandbox:") and "awk: not found" in line
    assert "\n" not in line
    ghost = ShellTool("no-such-tool-here", "true", "", "ghost-pkg", base=False)
    assert ToolCheck(ghost, "missing").line() == (
        "no-such-tool-here: not installed (apt-get install ghost-pkg)"
    )
    assert judge(ghost, None).status == "missing"


def test_a_probe_that_never_ran_is_broken_not_ok() -> None:
    awk = next(t for t in SHELL_TOOLS if t.name == "awk")
    if not on_host(awk):
        pytest.skip("awk is not in this host's /usr/bin: apt-get install mawk")
    assert parse_probe("") == {}
    assert judge(awk, None).status == "broken"


# ---- the alternatives links: only links come in, never a file's contents ------------------


def test_alternatives_keep_links_into_the_view_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("a regular file: its contents must never come in")
    (tmp_path / "secret").write_text("token")
    os.symlink("/usr/bin/mawk", tmp_path / "awk")
    os.symlink("/usr/share/man/man1/mawk.1.gz", tmp_path / "awk.1.gz")  # outside the view
    os.symlink("/root/.ssh/id_rsa", tmp_path / "key")  # outside the view
    os.symlink("/opt/toolchains/jdk/bin/java", tmp_path / "java")
    visible = ("/usr/bin", "/usr/lib", "/opt/toolchains/jdk")
    assert alternatives(visible, tmp_path) == (
        ("awk", "/usr/bin/mawk"),
        ("java", "/opt/toolchains/jdk/bin/java"),
    )
    assert alternatives(visible, tmp_path / "absent") == ()
    assert all(path.startswith("/usr/share/") for path, _ in share_links(visible))


def test_alternatives_are_links_in_a_read_only_directory(sandbox: Sandbox) -> None:
    if not Path("/etc/alternatives/awk").is_symlink():
        pytest.skip("this host has no /etc/alternatives/awk (not a Debian system)")
    r = sandbox.run(
        ["sh", "-c", "find /etc/alternatives ! -type l ! -path /etc/alternatives | wc -l; "
         "readlink /etc/alternatives/awk; ln -s x /etc/alternatives/y 2>/dev/null || echo ro"],
        limits=Limits(timeout_s=30),
    )  # fmt: skip
    assert r.stdout == f"0\n{os.readlink('/etc/alternatives/awk')}\nro\n", r.stderr
