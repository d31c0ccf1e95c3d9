"""A soak of `referee serve`: every route that matters, for a stated time, and the memory.

    .venv/bin/python bench/soak.py --duration-s 600 [--clients 8] [--every-s 10] [--mix all]

A `referee serve` subprocess (2 sandbox workers, ``--queue 1024`` so nothing is refused) on
127.0.0.1 serves the 164 HumanEval tasks (recorded in the sandbox) and, unless ``--mix
verify``, generated SQL and tool-world tasks. ``--clients`` asyncio httpx clients (one
connection each) loop over a mix of requests, each checked:

* ``verify``: ``POST /v1/verify`` of 1-8 canonical solutions of mixed kinds (function, SQL,
  tool world); every verdict must pass;
* ``session``: ``POST /v1/sessions`` (code), a snapshot, a wrong answer (done, reward < 1), the
  snapshot restored, the right answer (reward 1), ``/verify``, ``DELETE``;
* ``tools``: ``POST /v1/tools`` of each environment; ``GET /v1/tasks``, ``/health``, ``/metrics``;
* ``bad``: a 422 (unknown task id) and a 404 (unknown session).

An "answer" is one judged sample or one session step. After ``--warmup-s`` the server's RSS
(and its process tree's RSS and PSS, sandbox workers included) is sampled every ``--every-s``
with the answers so far; the slope is a least-squares line of RSS on answers over the samples
after warm-up, in MB per 1,000 answers (and per hour at the rate measured). Written to
``bench/out/soak.json`` (``--out`` to change).

**Compressed soak** (a million answers in well under an hour on 2 cores):

    .venv/bin/python bench/soak.py --mix compressed --answers 1000000 --warmup-answers 100000 \
        --out bench/results/load/soak_1m.json [--probe] [--arena-max 2] [--trim-every-s 30]

Most answers are reasoning-gym answers (``rg-*`` tasks, judged by exact comparison on the
host: microseconds each) sent ``--batch`` at a time, so the server's own path per answer
(validation, the engine's thread hand-off, the verdict, JSON both ways) is exercised a million
times at little verification cost; between them, every other route as in ``all`` (function
answers judged in the sandbox, code sessions, small one-sample requests, tools, health,
metrics, errors). ``--answers`` stops the load at that many answers; the fit then uses the
samples after ``--warmup-answers``. The slope comes with a 95 % interval (least squares on
the samples, and on 20 block means, which tames the samples' autocorrelation); the curve is
saved next to the JSON as CSV.

``--probe`` runs ``bench/probe/sitecustomize.py`` in the server: glibc's ``mallinfo2`` (bytes
in use against free bytes held in arenas), the arenas, Python's allocated blocks, with
``--tracemalloc N`` snapshots at the start and end of the measured part, diffed into the JSON.
``--arena-max`` sets ``MALLOC_ARENA_MAX``; ``--trim-every-s`` calls ``malloc_trim(0)`` that
often (levers, measured as such).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT, machine
from _service import anon_mb, descendants, humaneval_file, memory, rss_mb, serve

GENERATE = (sys.executable, "-m", "referee.cli", "tasks", "generate")
DOMAIN_FAMILIES = (("sql-filter", 12), ("sql-join", 12), ("shop-refund", 8))
#: Cheap answers of the compressed soak: judged on the host by exact comparison.
CHEAP_FAMILIES = (("rg-gcd", 100), ("rg-basic_arithmetic", 100), ("rg-chain_sum", 100))
PROBE = Path(__file__).parent / "probe"


def task_file(
    mix: str,
) -> tuple[Path, list[dict[str, str]], list[dict[str, str]], list[dict[str, str]]]:
    """A task file of HumanEval and (``mix`` all or compressed) generated domain tasks; the
    gold samples of all, the HumanEval ones (for sessions) and the cheap ones."""
    from referee.tasks.model import read_tasks, write_tasks
    from referee.verify.samples import gold_samples

    he_path, he_tasks, he_gold = humaneval_file()
    tasks = list(he_tasks)
    cheap: list[dict[str, str]] = []
    if mix in ("all", "compressed", "cheap"):
        tmp = Path(tempfile.mkdtemp(prefix="referee-soak-"))
        families = DOMAIN_FAMILIES if mix == "all" else ()
        if mix in ("compressed", "cheap"):
            families = DOMAIN_FAMILIES + CHEAP_FAMILIES
        for family, count in families:
            out = tmp / f"{family}.jsonl"
            subprocess.run(
                [*GENERATE, family, "--count", str(count), "--out", str(out)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            new = read_tasks(out)
            tasks += new
            if family.startswith("rg-"):
                cheap += gold_samples(new)
        path = tmp / "soak.jsonl"
        write_tasks(path, tasks)
    else:
        path = he_path
    cheap_ids = {x["task_id"] for x in cheap}
    gold = [x for x in gold_samples(tasks) if x["task_id"] not in cheap_ids]
    return path, gold, he_gold, cheap


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of y on x."""
    fit = slope_interval(points)
    return None if fit is None else fit[0]


def slope_interval(points: list[tuple[float, float]]) -> tuple[float, float, float] | None:
    """Least-squares slope of y on x with its 95 % interval (Student's t on n - 2 degrees of
    freedom): ``(slope, low, high)``. Assumes independent residuals, which memory samples are
    not (a step stays): see :func:`block_fit` for the interval quoted."""
    from scipy import stats

    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    a = my - b * mx
    resid = sum((y - a - b * x) ** 2 for x, y in points)
    se = (resid / (n - 2) / sxx) ** 0.5
    half = float(stats.t.ppf(0.975, n - 2)) * se
    return b, b - half, b + half


def block_fit(points: list[tuple[float, float]], blocks: int = 20) -> dict[str, Any] | None:
    """The slope and 95 % interval fitted on ``blocks`` means of consecutive samples (fewer,
    less dependent points: the interval is wider and more honest than the raw one)."""
    if len(points) < 2 * blocks:
        return None
    size = len(points) / blocks
    means = []
    for i in range(blocks):
        chunk = points[round(i * size) : round((i + 1) * size)]
        means.append((sum(x for x, _ in chunk) / len(chunk), sum(y for _, y in chunk) / len(chunk)))
    fit = slope_interval(means)
    if fit is None:
        return None
    return {"slope": round(fit[0], 5), "ci95": [round(fit[1], 5), round(fit[2], 5)]}


class Load:
    def __init__(
        self,
        gold: list[dict[str, str]],
        he_gold: list[dict[str, str]],
        cheap: list[dict[str, str]] | None = None,
        batch: int = 250,
    ) -> None:
        self.gold = gold
        self.he_gold = he_gold
        self.cheap = cheap or []
        self.batch = batch
        self.answers = 0
        self.requests = 0
        self.statuses: collections.Counter[str] = collections.Counter()
        self.wrong: list[str] = []
        self.ops: collections.Counter[str] = collections.Counter()

    def note(self, what: str, ok: bool) -> None:
        if not ok and len(self.wrong) < 20:
            self.wrong.append(what)
        elif not ok:
            self.wrong.append("...")

    async def call(self, c: httpx.AsyncClient, method: str, path: str, **kw: Any) -> httpx.Response:
        r = await c.request(method, path, **kw)
        self.requests += 1
        self.statuses[str(r.status_code)] += 1
        return r

    async def verify(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        samples = rng.sample(self.gold, rng.randint(1, 8))
        r = await self.call(c, "POST", "/v1/verify", json={"samples": samples})
        ok = r.status_code == 200 and all(v["passed"] for v in r.json()["verdicts"])
        self.note(f"verify {r.status_code} {r.text[:300]}", ok)
        self.answers += len(samples)

    async def cheap_batch(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        """``batch`` reasoning answers, every tenth one wrong (a wrong verdict must fail)."""
        samples = [dict(x) for x in rng.choices(self.cheap, k=self.batch)]
        wrong = set(range(0, len(samples), 10))
        for i in wrong:
            samples[i]["completion"] = "<answer>not it</answer>"
        r = await self.call(c, "POST", "/v1/verify", json={"samples": samples})
        ok = r.status_code == 200 and all(
            v["passed"] == (i not in wrong) for i, v in enumerate(r.json()["verdicts"])
        )
        self.note(f"cheap verify {r.status_code} {r.text[:300]}", ok)
        self.answers += len(samples)

    async def small(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        """One cheap answer per request: the per-request path, a trainer sending singles."""
        sample = rng.choice(self.cheap)
        r = await self.call(c, "POST", "/v1/verify", json={"samples": [sample]})
        ok = r.status_code == 200 and r.json()["verdicts"][0]["passed"]
        self.note(f"small verify {r.status_code} {r.text[:300]}", ok)
        self.answers += 1

    async def session(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        sample = rng.choice(self.he_gold)
        r = await self.call(
            c, "POST", "/v1/sessions", json={"env": "code", "task_id": sample["task_id"]}
        )
        if r.status_code != 200:
            self.note(f"open {r.status_code} {r.text[:300]}", False)
            return
        sid = r.json()["session_id"]
        base = f"/v1/sessions/{sid}"
        snap = (await self.call(c, "POST", base + "/snapshot")).json()["snapshot_id"]
        wrong = {"role": "assistant", "content": "```python\ndef nothing():\n    return 0\n```"}
        r = await self.call(c, "POST", base + "/step", json={"message": wrong})
        self.note(f"wrong step {r.text[:300]}", r.status_code == 200 and r.json()["reward"] < 1)
        await self.call(c, "POST", base + "/restore", json={"snapshot_id": snap})
        right = {"role": "assistant", "content": "```python\n" + sample["completion"] + "\n```"}
        r = await self.call(c, "POST", base + "/step", json={"message": right})
        self.note(f"right step {r.text[:300]}", r.status_code == 200 and r.json()["reward"] == 1)
        r = await self.call(c, "POST", base + "/verify")
        self.note(f"session verify {r.text[:300]}", r.status_code == 200 and r.json()["passed"])
        r = await self.call(c, "DELETE", base)
        self.note(f"close {r.text[:300]}", r.status_code == 200)
        self.answers += 2

    async def tools(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        env = rng.choice(["code", "sql", "toolworld", "shell"])
        r = await self.call(c, "POST", "/v1/tools", json={"env": env})
        self.note(f"tools {env} {r.text[:300]}", r.status_code == 200)
        for path in ("/v1/tasks", "/health", "/metrics"):
            r = await self.call(c, "GET", path)
            self.note(f"{path} {r.status_code}", r.status_code == 200)

    async def bad(self, c: httpx.AsyncClient, rng: random.Random) -> None:
        r = await self.call(
            c, "POST", "/v1/verify", json={"samples": [{"task_id": "nope", "completion": ""}]}
        )
        self.note(f"unknown task {r.status_code}", r.status_code == 422)
        r = await self.call(c, "POST", "/v1/sessions/" + "A" * 22 + "/verify")
        self.note(f"unknown session {r.status_code}", r.status_code == 404)


MIXES = {
    "all": (("verify", 6), ("session", 2), ("tools", 1), ("bad", 1)),
    "verify": (("verify", 1),),
    "session": (("session", 1),),
    # Per 100 requests: 20 batches of cheap answers (~97 % of the answers), 30 single cheap
    # answers, 20 verifies of 1-8 sandboxed/SQL/tool-world answers, 10 code sessions, 10 of
    # tools/tasks/health/metrics, 10 errors.
    "compressed": (
        ("cheap_batch", 20),
        ("small", 30),
        ("verify", 20),
        ("session", 10),
        ("tools", 10),
        ("bad", 10),
    ),
    "cheap": (("cheap_batch", 1),),
    "small": (("small", 1),),
}


async def drive(
    url: str,
    load: Load,
    mix: str,
    clients: int,
    until: float,
    seed: int,
    answers: int | None = None,
) -> None:
    ops, weights = zip(*MIXES[mix], strict=True)

    async def client(i: int) -> None:
        rng = random.Random(seed + i)
        async with httpx.AsyncClient(base_url=url, timeout=120) as c:
            while time.monotonic() < until and (answers is None or load.answers < answers):
                op = rng.choices(ops, weights)[0]
                load.ops[op] += 1
                try:
                    await getattr(load, op)(c, rng)
                except httpx.HTTPError as e:
                    load.statuses[f"error: {type(e).__name__}"] += 1
                    load.note(f"{op}: {type(e).__name__}: {e}", False)

    await asyncio.gather(*(client(i) for i in range(clients)))


def tree_memory(pid: int) -> dict[str, float]:
    out = memory(pid)
    out["server_anon_mb"] = round(anon_mb(pid), 2)
    kids = descendants(pid)
    out["workers_rss_mb"] = round(sum(rss_mb(p) for p in kids), 1)
    try:
        out["server_threads"] = len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        out["server_threads"] = 0
    return out


def probe_row(folder: Path | None, pid: int) -> dict[str, Any]:
    """The server's probe (``--probe``): allocator and Python heap figures, MB."""
    if folder is None:
        return {}
    try:
        row = json.loads((folder / f"probe-{pid}.json").read_text())
    except (OSError, ValueError):
        return {}
    keep = ("arena_mb", "mmap_mb", "in_use_mb", "free_mb", "arenas", "py_blocks", "traced_mb")
    return {f"malloc_{k}" if k.endswith("_mb") else k: row[k] for k in keep if k in row} | {
        "arena_system_mb": row.get("arena_system_mb")
    }


def snapshot(folder: Path, pid: int, name: str, timeout_s: float = 60.0) -> Path | None:
    """Ask the server's probe for a tracemalloc snapshot; its file once written."""
    (folder / f"dump-{pid}-{name}").touch()
    target = folder / f"snap-{pid}-{name}.pickle"
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if target.exists() and not (folder / f"dump-{pid}-{name}").exists():
            return target
        time.sleep(0.5)
    return None


def snapshot_diff(first: Path, last: Path, top: int = 15) -> list[str]:
    """tracemalloc's largest growths between two snapshots, by file and line."""
    import tracemalloc

    a = tracemalloc.Snapshot.load(str(first))
    b = tracemalloc.Snapshot.load(str(last))
    return [str(stat) for stat in b.compare_to(a, "lineno")[:top]]


def write_result(out: Path, result: dict[str, Any], columns: list[str]) -> None:
    """``result`` as JSON at ``out`` and its ``series`` (those ``columns``) as CSV beside it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    with out.with_suffix(".csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(result["series"])


def fits_of(series: list[dict[str, Any]], after: int, x_key: str = "answers") -> dict[str, Any]:
    """Slopes (MB per 1,000 of ``x_key``) of each memory column over the samples whose answers
    are at least ``after``: raw least squares with its interval, and on 20 block means."""
    rows = [r for r in series if r["answers"] >= after]
    out: dict[str, Any] = {}
    columns = [k for k, v in rows[0].items() if k.endswith("_mb") and isinstance(v, int | float)]
    for key in columns:
        points = [(r[x_key] / 1000, r[key]) for r in rows if r.get(key) is not None]
        fit = slope_interval(points)
        out[key] = {
            "slope": None if fit is None else round(fit[0], 5),
            "ci95": None if fit is None else [round(fit[1], 5), round(fit[2], 5)],
            "blocks": block_fit(points),
            "first": points[0][1] if points else None,
            "last": points[-1][1] if points else None,
            "min": min(y for _, y in points) if points else None,
            "max": max(y for _, y in points) if points else None,
        }
    return out


ROW = re.compile(
    r"t=\s*(?P<t>[\d.]+)s answers=\s*(?P<answers>\d+) requests=\s*(?P<requests>\d+) server RSS"
    r"\s+(?P<server_rss_mb>[\d.]+) MB\s+workers RSS\s+(?P<workers_rss_mb>[\d.]+) MB\s+tree PSS"
    r"\s+(?P<tree_pss_mb>[\d.]+) MB fds (?P<server_fds>\d+) threads (?P<server_threads>\d+)"
    r"(?: malloc in use (?P<malloc_in_use_mb>[\d.]+) free (?P<malloc_free_mb>[\d.]+) mmap"
    r" (?P<malloc_mmap_mb>[\d.]+) arenas (?P<arenas>\d+) py blocks (?P<py_blocks>\d+))?"
)


def from_log(log: Path, warmup_answers: int, out: Path) -> None:
    """The JSON and CSV of a soak stopped before its end, from the rows it printed (a soak
    killed at a deadline writes nothing itself)."""
    series: list[dict[str, Any]] = []
    for line in log.read_text().splitlines():
        m = ROW.match(line)
        if m:
            series.append({k: float(v) for k, v in m.groupdict().items() if v is not None})
    result = {
        "from_log": str(log),
        "note": "the soak was stopped before its --answers; rows as it printed them",
        "answers": int(series[-1]["answers"]),
        "requests": int(series[-1]["requests"]),
        "elapsed_s": series[-1]["t"],
        "after_warmup_mb_per_1000_answers": fits_of(series, warmup_answers),
        "after_warmup_mb_per_1000_requests": fits_of(series, warmup_answers, "requests"),
        "series": series,
    }
    write_result(out, result, list(series[-1]))
    for key, fit in result["after_warmup_mb_per_1000_answers"].items():
        print(
            f"after {warmup_answers} answers, {key}: {fit['slope']} MB per 1,000 answers "
            f"(95 % {fit['ci95']}; 20 blocks {fit['blocks']}); {fit['first']} -> {fit['last']}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from-log", default=None, help="rows printed by a stopped soak: fit them")
    ap.add_argument(
        "--duration-s", type=float, default=None, help="default 600 s; with --answers, 3 h"
    )
    ap.add_argument("--warmup-s", type=float, default=30.0)
    ap.add_argument("--every-s", type=float, default=10.0)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mix", choices=sorted(MIXES), default="all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--answers", type=int, default=None, help="stop at this many answers")
    ap.add_argument(
        "--warmup-answers", type=int, default=0, help="fit only the samples after this many"
    )
    ap.add_argument("--batch", type=int, default=250, help="cheap answers per batch request")
    ap.add_argument("--probe", action="store_true", help="allocator probe in the server")
    ap.add_argument("--tracemalloc", type=int, default=0, help="frames traced (with --probe)")
    ap.add_argument("--arena-max", type=int, default=None, help="MALLOC_ARENA_MAX")
    ap.add_argument("--trim-every-s", type=float, default=0.0, help="malloc_trim(0) this often")
    ap.add_argument("--serve-arg", action="append", default=[], help="passed to referee serve")
    ap.add_argument(
        "--server-path", default=None, help="put first on the server's PYTHONPATH (other code)"
    )
    ap.add_argument("--out", default=str(OUT / "soak.json"))
    args = ap.parse_args()
    if args.from_log:
        from_log(Path(args.from_log), args.warmup_answers, Path(args.out))
        return
    if args.duration_s is None:  # with --answers, the answers stop it (or this, if first)
        args.duration_s = 600.0 if args.answers is None else 3 * 3600.0
    if args.answers is not None:
        args.warmup_s = min(args.warmup_s, 5.0)

    path, gold, he_gold, cheap = task_file(args.mix)
    load = Load(gold, he_gold, cheap, args.batch)
    series: list[dict[str, Any]] = []
    serve_args = ["--tasks", str(path), "--workers", str(args.workers), "--queue", "4096"]
    paths = [args.server_path] if args.server_path else []
    extra: dict[str, str] = {}
    probe_dir: Path | None = None
    if args.probe or args.trim_every_s > 0:
        probe_dir = Path(tempfile.mkdtemp(prefix="referee-soak-probe-"))
        paths.insert(0, str(PROBE))
        extra["REFEREE_SOAK_PROBE"] = str(probe_dir)
        extra["REFEREE_SOAK_TRIM_EVERY_S"] = str(args.trim_every_s)
        if args.tracemalloc:
            extra["REFEREE_SOAK_TRACEMALLOC"] = str(args.tracemalloc)
    if args.arena_max is not None:
        extra["MALLOC_ARENA_MAX"] = str(args.arena_max)
    if paths:
        extra["PYTHONPATH"] = os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")])
    snaps: dict[str, Path | None] = {}
    with serve(serve_args + args.serve_arg, env=extra or None) as srv:
        stop = threading.Event()
        t0 = time.monotonic()
        warm_end = t0 + args.warmup_s

        def row_now() -> dict[str, Any]:
            return {
                "t": round(time.monotonic() - t0, 1),
                "answers": load.answers,
                "requests": load.requests,
                **tree_memory(srv.pid),
                **probe_row(probe_dir, srv.pid),
                "loadavg_1m": os.getloadavg()[0],
            }

        def sample() -> None:
            stop.wait(max(0.0, warm_end - time.monotonic()))
            while not stop.is_set():
                if (
                    probe_dir is not None
                    and args.tracemalloc
                    and "first" not in snaps
                    and load.answers >= args.warmup_answers
                ):
                    snaps["first"] = snapshot(probe_dir, srv.pid, "first")
                row = row_now()
                series.append(row)
                print(
                    f"t={row['t']:7.1f}s answers={row['answers']:8d} requests={row['requests']:8d} "
                    f"server RSS {row['server_rss_mb']:6.1f} MB  workers RSS "
                    f"{row['workers_rss_mb']:6.1f} MB  tree PSS {row['tree_pss_mb']:6.1f} MB "
                    f"fds {row['server_fds']} threads {row['server_threads']}"
                    + (
                        f" malloc in use {row['malloc_in_use_mb']:.1f} free "
                        f"{row['malloc_free_mb']:.1f} mmap {row['malloc_mmap_mb']:.1f} arenas "
                        f"{row['arenas']} py blocks {row['py_blocks']}"
                        if "malloc_in_use_mb" in row
                        else ""
                    ),
                    flush=True,
                )
                stop.wait(args.every_s)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        asyncio.run(
            drive(
                srv.url,
                load,
                args.mix,
                args.clients,
                t0 + args.duration_s,
                args.seed,
                args.answers,
            )
        )
        stop.set()
        sampler.join()
        series.append(row_now())
        if probe_dir is not None and args.tracemalloc:
            snaps["last"] = snapshot(probe_dir, srv.pid, "last")
    elapsed = time.monotonic() - t0
    fits = {}
    for key in ("server_rss_mb", "server_anon_mb", "workers_rss_mb", "tree_pss_mb"):
        s = slope([(row["answers"] / 1000, row[key]) for row in series])
        fits[key] = {
            "mb_per_1000_answers": None if s is None else round(s, 4),
            "mb_per_hour": None if s is None else round(s * load.answers / elapsed * 3.6, 2),
        }
    # The second half alone: a slope that levels off shows here.
    half = series[len(series) // 2 :]
    s2 = slope([(row["answers"] / 1000, row["server_rss_mb"]) for row in half])
    after_warmup = fits_of(series, args.warmup_answers)
    per_request = fits_of(series, args.warmup_answers, "requests")
    diff = None
    if snaps.get("first") and snaps.get("last"):
        diff = snapshot_diff(snaps["first"], snaps["last"])  # type: ignore[arg-type]
    result = {
        "machine": machine(),
        "loadavg": os.getloadavg(),
        "command": "python bench/soak.py " + " ".join(sys.argv[1:]),
        "settings": vars(args),
        "elapsed_s": round(elapsed, 1),
        "answers": load.answers,
        "requests": load.requests,
        "answers_per_s": round(load.answers / elapsed, 1),
        "ops": dict(load.ops),
        "statuses": dict(sorted(load.statuses.items())),
        "wrong": load.wrong,
        "slope": fits,
        "server_rss_second_half_mb_per_1000_answers": None if s2 is None else round(s2, 4),
        "after_warmup_mb_per_1000_answers": after_warmup,
        "after_warmup_mb_per_1000_requests": per_request,
        "tracemalloc_growth_top": diff,
        "series": series,
    }
    out = Path(args.out)
    write_result(out, result, [k for k in series[-1] if not isinstance(series[-1][k], list)])
    print(
        f"{load.answers} answers, {load.requests} requests in {elapsed:.0f} s "
        f"({result['answers_per_s']}/s); statuses {result['statuses']}; wrong {len(load.wrong)}"
    )
    for key, fit in after_warmup.items():
        print(
            f"after {args.warmup_answers} answers, {key}: {fit['slope']} MB per 1,000 answers "
            f"(95 % {fit['ci95']}; 20 blocks {fit['blocks']}); {fit['first']} -> {fit['last']}"
        )
    print(f"server RSS slope, second half: {s2} MB per 1,000 answers; saved {args.out}")
    if diff:
        print("tracemalloc growth:\n  " + "\n  ".join(diff[:10]))


if __name__ == "__main__":
    main()
