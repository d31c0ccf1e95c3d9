"""Toolchains for compiled (and other non-Python) languages: how to build and run a program.

A :class:`Toolchain` says, for one language, which host directories the sandbox must see
read-only (a compiler's headers, a JVM's configuration, a Rust sysroot outside ``/usr``), how to
compile a source file in a workspace (argv, limits, environment) and how to run what it built.
The sandbox's view already holds ``/usr/bin`` and ``/usr/lib`` (gcc's ``/usr/lib/gcc``, the JVM
in ``/usr/lib/jvm``, Debian's Go in ``/usr/lib/go-*``); a toolchain adds only what is missing
there. Nothing here runs a program: :class:`~referee.sandbox.Sandbox` does, with
``Sandbox(toolchains=[...])`` binding what the named toolchains need.

>>> tc = find_toolchain("c")                                        # doctest: +SKIP
>>> tc.compile_argv, tc.run_argv                                    # doctest: +SKIP
(['gcc', '-O2', ...], ['/workspace/prog'])

Memory: the JVM and Go's runtime reserve far more address space than they use, so their limits
must come from the memory cgroup (which the sandbox uses wherever it exists), not from
``RLIMIT_AS``; the JVM's heap is also capped with ``-Xmx``. Threads count against the pids limit,
hence ``max_processes`` per toolchain. Caches (``GOCACHE``, ``HOME``) live in the run's ``/tmp``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from referee.errors import ConfigError
from referee.sandbox.jdk_archive import jdk_archive

__all__ = [
    "LANGUAGES",
    "TOOLCHAIN_MOUNT",
    "Toolchain",
    "available_toolchains",
    "find_toolchain",
]

#: The languages a toolchain exists for, in a fixed order.
LANGUAGES = ("python", "c", "cpp", "java", "javascript", "go", "rust")
#: Where host directories outside /usr appear in the sandbox: ``/opt/toolchains/<name>``.
TOOLCHAIN_MOUNT = "/opt/toolchains"
#: Where the built program lives in the run's workspace.
PROGRAM = "prog"


@dataclass(frozen=True)
class Toolchain:
    """How one language is built and run inside the sandbox.

    ``source`` is the file the answer is written to; ``compile_argv`` (None for interpreted
    languages) runs in the workspace and must leave ``outputs`` there (``{source}`` and
    ``{memory_mb}`` are filled in); ``run_argv`` runs the result. ``binds`` are (host path,
    sandbox path) pairs made visible read-only. ``compile_memory_mb``/``compile_timeout_s`` bound
    a build; ``run_memory_overhead_mb`` is added to a case's limit for a runtime's own baseline
    (the JVM's); ``max_processes`` bounds the threads of a run (the pids cgroup counts threads);
    ``startup_s`` is added to a case's time limit for a runtime's own start.
    """

    language: str
    version: str
    source: str
    run_argv: tuple[str, ...]
    compile_argv: tuple[str, ...] | None = None
    outputs: tuple[str, ...] = (PROGRAM,)
    binds: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    compile_timeout_s: float = 60.0
    compile_memory_mb: int = 1024
    compile_processes: int = 64
    run_memory_overhead_mb: int = 0
    max_processes: int = 16
    #: Seconds a run gets on top of a case's time limit for the runtime's own start (the JVM).
    startup_s: float = 0.0
    #: Address space a run reserves on top of what it uses (the JVM's, V8's and Go's arenas),
    #: added to its memory limit only where RLIMIT_AS stands in for a missing memory cgroup.
    reserve_mb: int = 0

    @property
    def compiled(self) -> bool:
        return self.compile_argv is not None

    def compile_command(self, source: str) -> list[str]:
        assert self.compile_argv is not None
        return [a.replace("{source}", source) for a in self.compile_argv]

    def run_command(self, memory_mb: int, main: str = "Main") -> list[str]:
        """The argv of one run under a memory limit of ``memory_mb``; ``main`` is Java's class.
        ``{stack_kb}`` (node's stack) is three quarters of the memory limit: the run's stack
        rlimit is the whole limit."""
        stack_kb = str(memory_mb * 1024 * 3 // 4)
        return [
            a.replace("{memory_mb}", str(memory_mb))
            .replace("{stack_kb}", stack_kb)
            .replace("{main}", main)
            for a in self.run_argv
        ]


def _version(argv: list[str], pattern: str) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    m = re.search(pattern, out.stdout + out.stderr)
    return m.group(0) if m else "unknown"


def _outside_usr(path: Path) -> bool:
    resolved = str(path.resolve())
    return not (resolved.startswith("/usr/bin/") or resolved.startswith("/usr/lib/"))


def _python() -> Toolchain:
    import sys

    v = f"CPython {sys.version.split()[0]}"
    # Python runs on the sandbox's own interpreter (the fork server's fast path).
    return Toolchain("python", v, "main.py", run_argv=("python3", "main.py"))


def _gcc(language: str) -> Toolchain | None:
    compiler = "gcc" if language == "c" else "g++"
    if shutil.which(compiler) is None or not Path("/usr/include").is_dir():
        return None
    std = ["-std=gnu17"] if language == "c" else ["-std=gnu++17"]
    src = "main.c" if language == "c" else "main.cpp"
    libs = ["-lm"] if language == "c" else []
    return Toolchain(
        language,
        f"{compiler} " + _version([compiler, "-dumpfullversion"], r"[\d.]+"),
        src,
        run_argv=(f"/workspace/{PROGRAM}",),
        compile_argv=(compiler, "-O2", "-pipe", *std, "-o", PROGRAM, "{source}", *libs),
        binds=(("/usr/include", "/usr/include"),),
        compile_timeout_s=30.0,
        compile_memory_mb=1024,
        compile_processes=16,
    )


def _java() -> Toolchain | None:
    javac = shutil.which("javac")
    if javac is None:
        return None
    home = Path(javac).resolve().parent.parent  # .../jvm/<jdk>/bin/javac
    java = home / "bin" / "java"
    if not java.exists():
        return None
    binds: list[tuple[str, str]] = []
    # Debian links the JDK's conf files to /etc/java-N-openjdk, which the sandbox has not got.
    for etc in sorted(Path("/etc").glob("java-*")):
        if etc.is_dir():
            binds.append((str(etc), str(etc)))
    outside = _outside_usr(home)
    if outside:
        binds.append((str(home), f"{TOOLCHAIN_MOUNT}/jdk"))
        home = Path(f"{TOOLCHAIN_MOUNT}/jdk")
    # Small reservations (class space reserves 1 GiB by default): where no memory cgroup
    # exists, the sandbox falls back to RLIMIT_AS, which counts reserved address space.
    reserve = ["-XX:CompressedClassSpaceSize=64m", "-XX:ReservedCodeCacheSize=32m"]
    # No hsperfdata file (the shared-memory counters jstat reads): its creation in /tmp is
    # about a tenth of a JVM's start here (bench/RESULTS.md section 39), and nothing reads it.
    quiet = ["-XX:-UsePerfData"]
    jvm = [
        "-Xmx512m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:ActiveProcessorCount=1",
        *quiet,
        *reserve,
    ]
    run_flags = [
        "-Xss64m",
        "-XX:+UseSerialGC",
        "-XX:ActiveProcessorCount=1",
        *quiet,
        *reserve,
        "-XX:MaxMetaspaceSize=128m",
    ]
    # The JDK classes programs load, archived once (referee.sandbox.jdk_archive); only where
    # the JDK has the same path in the sandbox (an archive names the modules image it holds).
    archive = None if outside else jdk_archive(java, run_flags)
    if archive is not None:
        binds.append((str(archive), f"{TOOLCHAIN_MOUNT}/jdk-cds.jsa"))
        run_flags.append(f"-XX:SharedArchiveFile={TOOLCHAIN_MOUNT}/jdk-cds.jsa")
    # And javac's own (jdk.compiler's classes): half a build's time.
    archive = None if outside else jdk_archive(java, jvm, compiler=True)
    if archive is not None:
        binds.append((str(archive), f"{TOOLCHAIN_MOUNT}/javac-cds.jsa"))
        jvm.append(f"-XX:SharedArchiveFile={TOOLCHAIN_MOUNT}/javac-cds.jsa")
    return Toolchain(
        "java",
        "OpenJDK " + _version([str(java), "-version"], r"\d+(\.\d+)*"),
        "Main.java",
        run_argv=(
            str(home / "bin" / "java"),
            "-Xmx{memory_mb}m",
            *run_flags,
            "-cp",
            "/workspace",
            "{main}",
        ),
        compile_argv=(
            str(home / "bin" / "javac"),
            *(f"-J{o}" for o in jvm),
            "-encoding",
            "UTF-8",
            "-nowarn",
            "-d",
            ".",
            "{source}",
        ),
        outputs=(),  # the .class files, whatever they are named
        binds=tuple(binds),
        compile_timeout_s=60.0,
        compile_memory_mb=1024,
        compile_processes=64,
        run_memory_overhead_mb=160,
        max_processes=64,
        startup_s=1.0,
        reserve_mb=2048,
    )


def _node() -> Toolchain | None:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        return None
    path = Path(node).resolve()
    binds: tuple[tuple[str, str], ...] = ()
    exe = str(path)
    if _outside_usr(path):
        prefix = path.parent.parent
        binds = ((str(prefix), f"{TOOLCHAIN_MOUNT}/node"),)
        exe = f"{TOOLCHAIN_MOUNT}/node/{path.relative_to(prefix)}"
    return Toolchain(
        "javascript",
        "node " + _version([node, "--version"], r"[\d.]+"),
        "main.js",
        run_argv=(exe, "--max-old-space-size={memory_mb}", "--stack-size={stack_kb}", "main.js"),
        binds=binds,
        run_memory_overhead_mb=64,
        max_processes=32,
        startup_s=0.5,
        reserve_mb=16384,
    )


def _go() -> Toolchain | None:
    go = shutil.which("go")
    if go is None:
        return None
    try:
        goroot = subprocess.run(
            [go, "env", "GOROOT"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    root = Path(goroot).resolve()
    binds: list[tuple[str, str]] = []
    # Debian's GOROOT links src/ and api/ into /usr/share/go-N: the sandbox needs those too.
    shared = {
        str(Path(os.path.realpath(p)).parent)
        for p in root.iterdir()
        if p.is_symlink() and not os.path.realpath(p).startswith(str(root))
    }
    for s in sorted(shared):
        binds.append((s, s))
    sandbox_root = str(root)
    if _outside_usr(root / "bin" / "go"):
        binds.append((str(root), f"{TOOLCHAIN_MOUNT}/go"))
        sandbox_root = f"{TOOLCHAIN_MOUNT}/go"
    return Toolchain(
        "go",
        _version([go, "version"], r"go\d+(\.\d+)*"),
        "main.go",
        run_argv=(f"/workspace/{PROGRAM}",),
        compile_argv=(
            f"{sandbox_root}/bin/go",
            "build",
            "-ldflags=-s -w",
            "-o",
            PROGRAM,
            "{source}",
        ),
        binds=tuple(binds),
        env=(
            ("GOROOT", sandbox_root),
            ("GOCACHE", "/tmp/go-cache"),
            ("GOPATH", "/tmp/go"),
            ("GO111MODULE", "off"),
            ("CGO_ENABLED", "0"),
            ("GOTOOLCHAIN", "local"),
            ("GOPROXY", "off"),
            ("GOMAXPROCS", "2"),
        ),
        compile_timeout_s=60.0,
        compile_memory_mb=1024,
        compile_processes=64,
        max_processes=32,
        reserve_mb=1024,
    )


def _rust() -> Toolchain | None:
    rustup = Path.home() / ".cargo" / "bin" / "rustc"
    rustc = shutil.which("rustc") or (str(rustup) if rustup.exists() else None)
    if rustc is None:
        return None
    try:
        sysroot = subprocess.run(
            [rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    root = Path(sysroot)
    binds: tuple[tuple[str, str], ...] = ()
    exe = str(root / "bin" / "rustc")
    if _outside_usr(root / "bin" / "rustc"):  # rustup's toolchains live under the home directory
        binds = ((str(root), f"{TOOLCHAIN_MOUNT}/rust"),)
        exe = f"{TOOLCHAIN_MOUNT}/rust/bin/rustc"
    version = _version([str(root / "bin" / "rustc"), "--version"], r"rustc \d+(\.\d+)*")
    edition = "2021" if _at_least(version, (1, 56)) else "2018"
    return Toolchain(
        "rust",
        version,
        "main.rs",
        run_argv=(f"/workspace/{PROGRAM}",),
        compile_argv=(
            exe,
            "-O",
            "--edition",
            edition,
            "-C",
            "debuginfo=0",
            "-C",
            "codegen-units=4",
            "-C",
            "linker=gcc",
            "-C",
            "strip=symbols",
            "-o",
            PROGRAM,
            "{source}",
        ),
        binds=binds,
        env=(("CARGO_HOME", "/tmp/cargo"), ("RUSTUP_HOME", "/tmp/rustup")),
        compile_timeout_s=60.0,
        compile_memory_mb=1536,
        compile_processes=64,
    )


def _iverilog() -> Toolchain | None:
    # Icarus Verilog (the verilog domain): iverilog compiles, vvp simulates; both and their
    # helpers (/usr/lib/<triplet>/ivl) live under /usr, which the view already binds.
    iverilog, vvp = shutil.which("iverilog"), shutil.which("vvp")
    if iverilog is None or vvp is None:
        return None
    return Toolchain(
        "verilog",
        "Icarus Verilog " + _version([iverilog, "-V"], r"\d+\.\d+"),
        "design.v",
        run_argv=(vvp, "-n", PROGRAM),
        compile_argv=(iverilog, "-g2012", "-o", PROGRAM, "{source}"),
        compile_timeout_s=20.0,
        compile_memory_mb=512,
        compile_processes=8,
        max_processes=4,
    )


def _at_least(version: str, wanted: tuple[int, int]) -> bool:
    m = re.search(r"(\d+)\.(\d+)", version)
    return m is not None and (int(m.group(1)), int(m.group(2))) >= wanted


_FINDERS = {
    "python": _python,
    "c": lambda: _gcc("c"),
    "cpp": lambda: _gcc("cpp"),
    "java": _java,
    "javascript": _node,
    "go": _go,
    "rust": _rust,
    # Not a program language (not in LANGUAGES): the verilog domain's simulator.
    "verilog": _iverilog,
}


@functools.cache
def _find(language: str) -> Toolchain | None:
    return _FINDERS[language]()


def _current(language: str) -> Toolchain | None:
    tc = _find(language)
    if tc is not None and any(not os.path.exists(host) for host, _ in tc.binds):
        # A path it binds went away since it was found (a cleared cache took the JDK's
        # archives): look again, so that a sandbox never fails on a file that is gone.
        _find.cache_clear()
        tc = _find(language)
    return tc


def find_toolchain(language: str) -> Toolchain:
    """The host's toolchain for ``language``; a :class:`ConfigError` saying how to install it."""
    if language not in _FINDERS:
        raise ConfigError(
            f"no toolchain for language {language!r}; the languages are "
            f"{', '.join(LANGUAGES)} (and 'verilog', the HDL simulator)"
        )
    tc = _current(language)
    if tc is None:
        package = {
            "c": "gcc",
            "cpp": "g++",
            "java": "openjdk-17-jdk-headless",
            "javascript": "nodejs",
            "go": "golang-go",
            "rust": "rustc",
            "verilog": "iverilog",
        }[language]
        raise ConfigError(
            f"the {language} toolchain is not installed on this machine; "
            f"install it (`apt-get install {package}`, or run `make bootstrap` as root)"
        )
    return tc


def available_toolchains() -> dict[str, Toolchain]:
    """Every toolchain this machine has, by language."""
    return {lang: tc for lang in LANGUAGES if (tc := _current(lang)) is not None}
