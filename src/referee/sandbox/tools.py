"""The shell tools a sandboxed program can count on, and a check that each one runs in there.

Shell tasks (AgentBench's OS tasks, a repository's build scripts) expect the ordinary commands of
a Debian system. The sandbox shows the host's ``/usr/bin``, but a command can still be missing in
there though the host has it: ``/usr/bin/awk`` is a link into ``/etc/alternatives``, which the view
must re-create (it does; :func:`referee.sandbox.view.alternatives`). :data:`SHELL_TOOLS` declares
the commands, each with a tiny real use and what it prints; :func:`check_tools` runs them all in one
sandbox run and says which are missing on the host or broken inside (``referee doctor`` prints it).

>>> from referee.sandbox import Sandbox                       # doctest: +SKIP
>>> from referee.sandbox.tools import check_tools
>>> with Sandbox(python_workers=1) as sb:
...     [c.line() for c in check_tools(sb) if not c.ok]
[]

``base`` tools come with every Debian system (its Essential and required packages: coreutils,
findutils, grep, sed, tar, gzip, diffutils, debianutils, bash, mawk); the others come with
packages a minimal image may lack (``apt-get install bzip2 xz-utils patch bc file``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from referee.sandbox.core import Sandbox
    from referee.sandbox.result import ExecResult

__all__ = [
    "SHELL_TOOLS",
    "ShellTool",
    "ToolCheck",
    "check_tools",
    "judge",
    "on_host",
    "parse_probe",
    "probe_script",
    "run_probe",
]

#: Where the sandbox finds commands (its PATH, less the interpreter's own directory).
SANDBOX_BIN = "/usr/bin"


@dataclass(frozen=True)
class ShellTool:
    """A command; ``probe`` (shell code run in an empty directory) uses it and prints ``expect``."""

    name: str
    probe: str
    expect: str
    package: str  # the Debian package that provides it
    base: bool = True  # every Debian system has it (Essential or required priority)


def _t(
    name: str, probe: str, expect: str, package: str = "coreutils", base: bool = True
) -> ShellTool:
    return ShellTool(name, probe, expect, package, base)


#: The commands a shell task may use, each with a tiny real use and its output.
SHELL_TOOLS: tuple[ShellTool, ...] = (
    _t("sh", "sh -c 'echo $((6 * 7))'", "42", "dash"),
    _t("bash", "bash -c 'a=(x y); echo ${a[1]}'", "y", "bash"),
    _t("ls", "touch b a; ls", "a\nb"),
    _t("cat", "printf 'x\\n' > f; cat f", "x"),
    _t("cp", "echo x > f; cp f g; cat g", "x"),
    _t("mv", "echo x > f; mv f g; cat g; test -e f || echo gone", "x\ngone"),
    _t("rm", "touch f; rm f; test -e f || echo gone", "gone"),
    _t("mkdir", "mkdir -p d/e; test -d d/e && echo made", "made"),
    _t("touch", "touch f; test -f f && echo made", "made"),
    _t("chmod", "touch f; chmod 640 f; stat -c %a f", "640"),
    _t("ln", "echo x > f; ln -s f l; cat l", "x"),
    _t("readlink", "ln -s target l; readlink l", "target"),
    _t("stat", "printf abc > f; stat -c %s f", "3"),
    _t("mktemp", 'd=$(mktemp -d); test -d "$d" && echo made; rm -r "$d"', "made"),
    _t("head", "printf '1\\n2\\n3\\n' | head -n 2", "1\n2"),
    _t("tail", "printf '1\\n2\\n3\\n' | tail -n 1", "3"),
    _t("sort", "printf '10\\n9\\n2\\n' | sort -n", "2\n9\n10"),
    _t("uniq", "printf 'a\\na\\nb\\n' | uniq", "a\nb"),
    _t("wc", "printf 'a b\\nc\\n' | wc -w", "3"),
    _t("cut", "echo a:b:c | cut -d: -f2", "b"),
    _t("tr", "echo abc | tr a-z A-Z", "ABC"),
    _t("tee", "echo x | tee f > /dev/null; cat f", "x"),
    _t("tac", "printf '1\\n2\\n' | tac", "2\n1"),
    _t("paste", "printf 'a\\nb\\n' | paste -sd,", "a,b"),
    _t("comm", "printf 'a\\nb\\n' > f; printf 'b\\nc\\n' > g; comm -12 f g", "b"),
    _t("seq", "seq 3", "1\n2\n3"),
    _t("expr", "expr 2 + 3", "5"),
    _t("basename", "basename /a/b.txt .txt", "b"),
    _t("dirname", "dirname /a/b", "/a"),
    _t("date", "date -u -d @86400 +%Y-%m-%d", "1970-01-02"),
    _t("env", "env X=1 sh -c 'echo $X'", "1"),
    _t("printf", "env printf '%03d\\n' 7", "007"),  # through env: the binary, not sh's builtin
    _t("sleep", "sleep 0 && echo slept", "slept"),
    _t("id", "id -u > /dev/null && echo ran", "ran"),
    _t("od", "printf A | od -An -tx1 | tr -d ' '", "41"),
    _t("base64", "printf hi | base64", "aGk="),
    _t("md5sum", "printf '' | md5sum | cut -c1-8", "d41d8cd9"),
    _t("sha256sum", "printf '' | sha256sum | cut -c1-8", "e3b0c442"),
    _t("awk", "echo 'a b' | awk '{print $2}'", "b", "mawk"),
    _t("sed", "echo abc | sed s/b/X/", "aXc", "sed"),
    _t("grep", "printf 'a\\nb\\n' | grep b", "b", "grep"),
    # egrep and fgrep warn on stderr that they are obsolescent (grep 3.8); stdout is the answer
    _t("egrep", "printf 'a\\nbb\\n' | egrep 'b+'", "bb", "grep"),
    _t("fgrep", "printf 'a.b\\naxb\\n' | fgrep a.b", "a.b", "grep"),
    _t("find", "mkdir d; touch d/f; find d -type f", "d/f", "findutils"),
    _t("xargs", "printf 'a\\nb\\n' | xargs echo", "a b", "findutils"),
    _t("which", "which sh > /dev/null && echo found", "found", "debianutils"),
    _t("tar", "echo x > f; tar cf t.tar f; rm f; tar xf t.tar; cat f", "x", "tar"),
    _t("gzip", "echo x | gzip | gzip -d", "x", "gzip"),
    _t("gunzip", "echo x | gzip > f.gz; gunzip f.gz; cat f", "x", "gzip"),
    _t("zcat", "echo x | gzip | zcat", "x", "gzip"),
    _t("diff", "echo a > f; echo b > g; diff f g | grep -c '^[<>]'", "2", "diffutils"),
    _t("cmp", "echo a > f; cp f g; cmp f g && echo same", "same", "diffutils"),
    _t("bzip2", "echo x | bzip2 | bzip2 -d", "x", "bzip2", base=False),
    _t("xz", "echo x | xz | xz -d", "x", "xz-utils", base=False),
    _t(
        "patch",
        "echo a > f; echo b > g; diff -u f g > p; patch -s f < p; cat f",
        "b",
        "patch",
        False,
    ),
    _t("bc", "echo '2^10' | bc", "1024", "bc", base=False),
    _t("file", "echo hello > t; file -b --mime-type t", "text/plain", "file", base=False),
)


def on_host(tool: ShellTool) -> bool:
    """Whether the host has the command where the sandbox looks (``/usr/bin``, links followed)."""
    return shutil.which(tool.name, path=SANDBOX_BIN) is not None


@dataclass(frozen=True)
class ToolCheck:
    """What became of one tool: ``ok``, ``missing`` (the host lacks it) or ``broken`` (in there)."""

    tool: ShellTool
    status: Literal["ok", "missing", "broken"]
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def line(self) -> str:
        """One line for a person: the tool, what went wrong, and what to do about it."""
        t = self.tool
        if self.status == "missing":
            return f"{t.name}: not installed (apt-get install {t.package})"
        if self.status == "broken":
            return f"{t.name}: fails in the sandbox: {self.detail}"
        return f"{t.name}: ok"


_MARK = "@@referee-tool"


def probe_script(tools: tuple[ShellTool, ...] = SHELL_TOOLS) -> str:
    """A POSIX shell script that runs every probe, each in a fresh directory of its own, and
    brackets its stdout and exit status with marker lines :func:`parse_probe` reads."""
    lines = ['cd "${TMPDIR:-/tmp}" && top=$(mktemp -d) || exit 125']
    for i, tool in enumerate(tools):
        lines += [
            f"printf '%s\\n' '{_MARK} out {i}'",
            f'(mkdir "$top/{i}" && cd "$top/{i}" && {{ {tool.probe}\n}}) 2> "$top/err{i}"',
            f"printf '\\n{_MARK} rc {i} %s\\n' \"$?\"",
            f"head -c 300 \"$top/err{i}\" | tr '\\n' ' '; printf '\\n{_MARK} end {i}\\n'",
        ]
    lines.append('rm -rf "$top"')
    return "\n".join(lines) + "\n"


def parse_probe(
    stdout: str, tools: tuple[ShellTool, ...] = SHELL_TOOLS
) -> dict[str, tuple[int | None, str, str]]:
    """Each tool's (exit status, stdout, stderr) from :func:`probe_script`'s output; a tool whose
    markers are missing (the script died first) is absent."""
    found: dict[str, tuple[int | None, str, str]] = {}
    for i, tool in enumerate(tools):
        start = stdout.find(f"{_MARK} out {i}\n")
        rc_at = stdout.find(f"\n{_MARK} rc {i} ", start)
        end = stdout.find(f"\n{_MARK} end {i}\n", rc_at)
        if min(start, rc_at, end) < 0:
            continue
        out = stdout[start + len(f"{_MARK} out {i}\n") : rc_at]
        rc_line, _, err = stdout[rc_at + len(f"\n{_MARK} rc {i} ") : end].partition("\n")
        found[tool.name] = (int(rc_line) if rc_line.isdigit() else None, out, err.strip())
    return found


def judge(tool: ShellTool, probed: tuple[int | None, str, str] | None) -> ToolCheck:
    """The verdict on one tool from its probe's result (``None``: the probe never ran)."""
    if not on_host(tool):
        return ToolCheck(tool, "missing")
    if probed is None:
        return ToolCheck(tool, "broken", "its probe never ran")
    rc, out, err = probed
    if rc == 0 and out.strip() == tool.expect:
        return ToolCheck(tool, "ok")
    said = f"; stderr: {err}" if err else ""
    return ToolCheck(
        tool, "broken", f"`{tool.probe}` exited {rc} printing {out.strip()!r}, "
        f"not {tool.expect!r}{said}"
    )  # fmt: skip


def run_probe(sandbox: Sandbox, tools: tuple[ShellTool, ...] = SHELL_TOOLS) -> ExecResult:
    """Run :func:`probe_script` in ``sandbox`` (as a command: the path ``referee exec`` takes)."""
    from referee.sandbox.limits import Limits

    return sandbox.run(
        ["sh", "probe.sh"],
        files={"probe.sh": probe_script(tools)},
        limits=Limits(timeout_s=60, memory_mb=512),
    )


def check_tools(sandbox: Sandbox, tools: tuple[ShellTool, ...] = SHELL_TOOLS) -> list[ToolCheck]:
    """Run every tool's probe in ``sandbox`` (one run) and judge each; see :class:`ToolCheck`."""
    probed = parse_probe(run_probe(sandbox, tools).stdout, tools)
    return [judge(tool, probed.get(tool.name)) for tool in tools]
