"""A class-data-sharing archive of the JDK classes judged programs load: a cheaper JVM start.

A JVM maps the classes of a CDS archive (parsed and verified already) instead of reading them
from the modules image. The JDK's own archive holds the classes of its start; a judged program
then loads a few hundred more (``Scanner``, ``BufferedReader``, ``Formatter``, regex,
collections, streams), each read, parsed and verified again in every run. Every case of a Java
answer is a fresh JVM (that is what keeps cases apart), so this is paid per case: an archive of
both sets takes about a sixth off a run's start here (bench/RESULTS.md section 39).

:func:`jdk_archive` builds one once per JDK and set of flags, on the host, from a warm-up
program of referee's own (below: trusted, never an answer): it runs with
``-XX:DumpLoadedClassList``, then ``-Xshare:dump`` archives the JDK classes of that list
(the warm-up's own classes left out), then a ``-Xshare:on`` run checks that the archive maps.
It lives under ``$XDG_CACHE_HOME/referee/jdk-cds`` (built under a temporary name and renamed
into place, so concurrent builders never see half a file), keyed by the ``java`` binary and
the flags. Where it cannot be built (no JDK compiler, no writable cache, a failed dump), the
answer is None and runs use the JDK's default archive, as before: the archive changes what a
run costs, never what it computes.

>>> jdk_archive(Path("/usr/lib/jvm/java-17-openjdk-amd64/bin/java"), ("-XX:+UseSerialGC",))
PosixPath('/root/.cache/referee/jdk-cds/run-....jsa')                 # doctest: +SKIP

``javac`` gets one of its own (``compiler=True``): it loads over two thousand classes of
``jdk.compiler`` per build, none of them in the JDK's default archive, and its archive halves
a build's time here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["CACHE", "jdk_archive"]

CACHE = Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "referee" / "jdk-cds"
#: The warm-up's package: every line of the class list naming it is left out of the archive.
_PACKAGE = "refereewarm"
#: What judged programs commonly use: input by Scanner and by BufferedReader/StringTokenizer,
#: output by println, printf and a PrintWriter, the collections, sorting, streams and lambdas,
#: big numbers, regex.
_WARM = f"""package {_PACKAGE};
import java.io.*; import java.math.*; import java.util.*; import java.util.stream.*;
public class Warm {{
  public static void main(String[] a) throws IOException {{
    BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
    StringTokenizer st = new StringTokenizer(br.readLine());
    int n = Integer.parseInt(st.nextToken()); long s = Long.parseLong(st.nextToken());
    Scanner sc = new Scanner(br);
    int m = sc.nextInt(); long x = sc.nextLong(); double d = sc.nextDouble(); String w = sc.next();
    String line = sc.hasNextLine() ? sc.nextLine() : "";
    String[] parts = "1 2 3".split("\\\\s+");
    List<Integer> list = new ArrayList<>(); Map<String, Integer> map = new HashMap<>();
    Set<Long> set = new HashSet<>(); TreeMap<Integer, Integer> tm = new TreeMap<>();
    TreeSet<Integer> ts = new TreeSet<>(); Deque<Integer> dq = new ArrayDeque<>();
    PriorityQueue<long[]> pq = new PriorityQueue<>((p, q) -> Long.compare(p[0], q[0]));
    LinkedList<Integer> ll = new LinkedList<>();
    for (int i = 0; i < 50; i++) {{
      list.add(i); map.merge(w + i % 3, 1, Integer::sum); set.add((long) i); tm.put(i, i);
      ts.add(-i); dq.addFirst(i); pq.add(new long[]{{50 - i, i}}); ll.add(i);
    }}
    int[] arr = {{5, 3, 1}}; Arrays.sort(arr); Integer[] boxed = {{3, 1, 2}};
    Arrays.sort(boxed, Collections.reverseOrder()); Collections.sort(list);
    long[] filled = new long[8]; Arrays.fill(filled, 7L);
    String joined = list.stream().filter(v -> v % 7 == 0).map(String::valueOf)
        .collect(Collectors.joining(","));
    int total = IntStream.range(0, n).map(v -> v * v).sum();
    BigInteger big = BigInteger.valueOf(s).pow(3).mod(BigInteger.TEN.pow(9).add(BigInteger.ONE));
    BigDecimal dec = new BigDecimal("1.5").multiply(BigDecimal.valueOf(d));
    StringBuilder sb = new StringBuilder();
    sb.append(m).append(' ').append(x).append(' ').append(Math.max(1, Math.abs(total)));
    PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));
    out.println(sb); out.printf("%.3f %s %s%n", d, big, dec); out.flush();
    System.out.println(String.format("%d %s %s %s %d", parts.length, joined, line.trim(),
        java.util.regex.Pattern.compile("[a-z]+").matcher(w).matches(), pq.poll()[1]));
  }}
}}
"""
_INPUT = b"4 5\n6 7 1.25 word rest of line\n"


def jdk_archive(
    java: Path, flags: Sequence[str], cache: Path | None = None, *, compiler: bool = False
) -> Path | None:
    """The archive for runs of ``java`` with ``flags`` (built on first use, then found),
    or None where it cannot be built; ``cache`` defaults to :data:`CACHE`. ``java`` is the
    ``bin/java`` of a JDK whose ``javac`` sits beside it. ``compiler``: the archive of
    ``javac`` itself (the classes of ``jdk.compiler`` it loads to compile the warm-up; for
    ``javac -J-XX:SharedArchiveFile=``) rather than of a program's run."""
    home = java.resolve().parent.parent
    # The launcher, the VM and the modules image: an upgrade of any makes another archive
    # (a JVM rejects an archive of another build, and would then run without sharing).
    parts = [java.resolve(), home / "lib" / "server" / "libjvm.so", home / "lib" / "modules"]
    try:
        stats = [(str(p), p.stat()) for p in parts if p == parts[0] or p.exists()]
    except OSError:
        return None
    cache = CACHE if cache is None else cache
    what = "javac" if compiler else "run"
    ident = [f"{p}:{st.st_size}:{st.st_mtime_ns}" for p, st in stats]
    key = hashlib.sha256("\0".join([what, *ident, *flags]).encode()).hexdigest()[:20]
    archive = cache / f"{what}-{key}.jsa"
    if archive.is_file():
        return archive
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".build-", dir=cache) as tmp:
            built = _build(java, list(flags), Path(tmp), compiler)
            if built is None:
                return None
            os.chmod(built, 0o644)
            os.replace(built, archive)  # atomic: a concurrent builder's file is as good
    except OSError:
        return None
    return archive


def _build(java: Path, flags: list[str], tmp: Path, compiler: bool) -> Path | None:
    javac = java.with_name("javac")
    source = tmp / _PACKAGE / "Warm.java"
    source.parent.mkdir()
    source.write_text(_WARM)
    listed, jsa = tmp / "all.classlist", tmp / "jdk.jsa"

    def ok(argv: list[str], stdin: bytes = b"") -> bool:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            done = subprocess.run(argv, input=stdin, capture_output=True, timeout=120, check=False)
            return done.returncode == 0
        return False

    dump_list = f"-XX:DumpLoadedClassList={listed}"
    # javac is the launcher of the module below: the archive is dumped and checked with it.
    main = ["-m", "jdk.compiler/com.sun.tools.javac.Main"] if compiler else []
    if compiler:
        steps = [([str(javac), *(f"-J{f}" for f in [*flags, dump_list]), "-nowarn", "-d",
                   str(tmp), str(source)], b"")]  # fmt: skip
    else:
        steps = [
            ([str(javac), "-nowarn", "-d", str(tmp), str(source)], b""),
            ([str(java), *flags, dump_list, "-cp", str(tmp), f"{_PACKAGE}.Warm"], _INPUT),
        ]
    for argv, stdin in steps:
        if not ok(argv, stdin):
            return None
    jdk_only = tmp / "jdk.classlist"
    lines = listed.read_text().splitlines()
    jdk_only.write_text("".join(f"{ln}\n" for ln in lines if _PACKAGE not in ln))
    dump = [str(java), *flags, "-Xshare:dump", f"-XX:SharedClassListFile={jdk_only}",
            f"-XX:SharedArchiveFile={jsa}", *main]  # fmt: skip
    check = [str(java), *flags, "-Xshare:on", f"-XX:SharedArchiveFile={jsa}", *main, "-version"]
    if not (ok(dump) and ok(check)):
        return None
    return jsa
