"""The dashboard's web app: server-rendered pages and the JSON endpoints behind them.

Pages: ``/`` (the runs), ``/runs/{run_id}`` (curves, pass rate by difficulty, the task heatmap,
alerts, trajectories), ``/trajectories/{id}`` (the viewer, with the audit label form) and
``/runs/{run_id}/audit`` (the queue). JSON: ``/api/runs``, ``/api/runs/{id}``, ``/api/runs/{id}
/metrics``, ``/curves``, ``/alerts``, ``/trajectories``, ``/audit``, ``/api/trajectories/{id}``
and ``POST /api/trajectories/{id}/label``; ``/api/docs`` lists them (``/openapi.json`` is the
schema). Everything the page needs is served by the app
itself: the CSS, one small script, and charts drawn as inline SVG.

>>> app = create_app("runs/r1")                                        # doctest: +SKIP
>>> from fastapi.testclient import TestClient                          # doctest: +SKIP
>>> TestClient(app).get("/api/runs").json()[0]["run_id"]               # doctest: +SKIP
'r1'
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from referee.errors import ConfigError, StoreError
from referee.track.audit import LABELS, AuditQueue, is_flagged
from referee.track.cost import cost_report
from referee.track.queries import HELDOUT_DIFFICULTY_SPLIT, TrajectoryFilters
from referee.track.store import TrackStore
from referee.ui import charts
from referee.ui.views import trajectory_view

__all__ = ["create_app"]

_HERE = Path(__file__).parent
_PAGE = 25  # trajectories per page of a run's list


def _pct(v: float | None) -> str:
    return "\u2013" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * 100:.0f}%"


def _num(v: float | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "\u2013"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def _setting(v: Any) -> str:
    """A run's setting for its header: unset (None) is "none", a mapping lists its set items
    (a budget of which only tokens is set: ``tokens 1000``), never Python's ``None``."""
    if v is None:
        return "none"
    if isinstance(v, dict):
        items = [f"{k} {_setting(x)}" for k, x in sorted(v.items()) if x is not None]
        return ", ".join(items) or "none"
    return str(v)


def _when(ts: float | None) -> str:
    return "\u2013" if not ts else time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    env = templates.env
    env.autoescape = True  # every value is escaped; charts are marked safe where made
    env.filters.update(pct=_pct, num=_num, when=_when, setting=_setting)
    env.globals.update(labels=LABELS, pass_colour=charts.pass_colour, is_flagged=is_flagged)
    return templates


def _open_store(store: TrackStore | str | os.PathLike[str]) -> TrackStore:
    if isinstance(store, TrackStore):
        return store
    return TrackStore(store, create=False)


def _bool(value: str | None) -> bool | None:
    if value in (None, ""):
        return None
    if value in ("1", "true", "yes", "passed"):
        return True
    if value in ("0", "false", "no", "failed"):
        return False
    raise HTTPException(400, f"passed must be true or false, got {value!r}")


def create_app(store: TrackStore | str | os.PathLike[str], *, audit_seed: int = 0) -> FastAPI:
    """The dashboard over a store (or a run folder that has one: StoreError if it has not)."""
    db = _open_store(store)
    queue = AuditQueue(db, seed=audit_seed)
    templates = _templates()
    # No Swagger UI: FastAPI's loads its script and CSS from a CDN, and the dashboard fetches
    # nothing from the network. /api/docs is a page of our own, drawn from the OpenAPI schema.
    app = FastAPI(title="referee", docs_url=None, redoc_url=None)
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.state.store = db

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("title", "referee")
        return templates.TemplateResponse(request, name, context, status_code=status)

    def known_run(run_id: str) -> Any:
        try:
            return db.run(run_id)
        except StoreError:
            raise HTTPException(404, f"no run {run_id!r} in {db.path}") from None

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return page(request, "error.html", exc.status_code, title="not found", error=exc)

    @app.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request) -> HTMLResponse:
        return page(request, "api.html", title="API", endpoints=api_endpoints(app))

    # --- pages ----------------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse)
    def runs_page(request: Request) -> HTMLResponse:
        runs = db.run_summaries()
        sparks = {r.run_id: charts.sparkline(r.trend) for r in runs}
        return page(request, "runs.html", runs=runs, sparks=sparks, path=db.run_dir)

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(
        request: Request,
        run_id: str,
        step: int | None = None,
        passed: str | None = None,
        task: str | None = None,
        split: str | None = None,
        page_no: int = 0,
    ) -> HTMLResponse:
        run = known_run(run_id)
        summary = next(s for s in db.run_summaries() if s.run_id == run_id)
        filters = TrajectoryFilters(step, _bool(passed), task or None, split or None)
        total = db.count_trajectory_rows(run_id, filters)
        rows = db.trajectory_rows(run_id, filters, limit=_PAGE, offset=page_no * _PAGE)
        query = {k: v for k, v in request.query_params.items() if k != "page_no"}
        return page(
            request,
            "run.html",
            title=run.name or run.run_id,
            run=run,
            summary=summary,
            charts=_run_charts(db, run_id),
            alerts=db.alerts(run_id=run_id),
            cost=cost_report(db, run_id),
            rows=rows,
            total=total,
            page_no=page_no,
            pages=max(1, math.ceil(total / _PAGE)),
            query=urlencode(query),
            filters={"step": step, "passed": passed or "", "task": task or "", "split": split},
        )

    @app.get("/trajectories/{trajectory_id}", response_class=HTMLResponse)
    def trajectory_page(request: Request, trajectory_id: str) -> HTMLResponse:
        try:
            view = trajectory_view(db, trajectory_id)
        except StoreError:
            raise HTTPException(404, f"no trajectory {trajectory_id!r} in {db.path}") from None
        run_id = view.trajectory.run_id
        following = queue.next(run_id)
        return page(
            request,
            "trajectory.html",
            title=f"trajectory {trajectory_id}",
            v=view,
            t=view.trajectory,
            next_item=following,
            labelled=request.query_params.get("labelled"),
            error=request.query_params.get("error"),
        )

    @app.post("/trajectories/{trajectory_id}/label")
    async def label_form(request: Request, trajectory_id: str) -> Response:
        _same_origin(request)
        # A plain urlencoded form, parsed here: it spares a multipart dependency.
        form = {k: v[-1] for k, v in parse_qs((await request.body()).decode()).items()}
        try:
            await run_in_threadpool(
                queue.label,
                trajectory_id,
                form.get("label", ""),
                form.get("note", ""),
                form.get("labeller", ""),
            )
        except ConfigError as e:
            if "no audit item or trajectory" in str(e):
                raise HTTPException(404, str(e)) from None
            url = f"/trajectories/{trajectory_id}?{urlencode({'error': str(e)})}"
            return RedirectResponse(url, status_code=303)
        back = form.get("back") or f"/trajectories/{trajectory_id}?labelled=1"
        if not back.startswith("/"):  # only back into this app
            back = f"/trajectories/{trajectory_id}?labelled=1"
        return RedirectResponse(back, status_code=303)

    @app.get("/runs/{run_id}/audit", response_class=HTMLResponse)
    def audit_page(request: Request, run_id: str) -> HTMLResponse:
        run = known_run(run_id)
        return page(
            request, "audit.html", title=f"audit · {run.name or run_id}", run=run,
            **_audit_context(db, queue, run_id), filled=request.query_params.get("filled"),
        )  # fmt: skip

    @app.post("/runs/{run_id}/audit/fill")
    def audit_fill(request: Request, run_id: str) -> Response:
        _same_origin(request)
        known_run(run_id)
        result = queue.fill(run_id)
        return RedirectResponse(
            f"/runs/{run_id}/audit?filled={result.flagged + result.random}", status_code=303
        )

    # --- JSON ---------------------------------------------------------------------------------

    @app.get("/api/runs")
    def api_runs() -> list[dict[str, Any]]:
        return [_dump(s) for s in db.run_summaries()]

    @app.get("/api/runs/{run_id}")
    def api_run(run_id: str) -> dict[str, Any]:
        run = known_run(run_id)
        summary = next(s for s in db.run_summaries() if s.run_id == run_id)
        return {**_dump(summary), "config": run.config}

    @app.get("/api/runs/{run_id}/metrics")
    def api_metrics(
        run_id: str, name: Annotated[list[str] | None, Query()] = None
    ) -> list[dict[str, Any]]:
        known_run(run_id)
        rows = db.metrics(run_id, names=name)
        return [{**r.model_dump(), "value": _finite(r.value)} for r in rows]

    @app.get("/api/runs/{run_id}/curves")
    def api_curves(run_id: str) -> dict[str, Any]:
        known_run(run_id)
        return {
            "curves": db.curves(run_id),
            "pass_by_difficulty": [_dump(b) for b in db.pass_by_difficulty(run_id)],
            "heatmap": _dump(db.task_heatmap(run_id)),
        }

    @app.get("/api/runs/{run_id}/cost")
    def api_cost(run_id: str) -> dict[str, Any]:
        known_run(run_id)
        return cost_report(db, run_id).as_dict()

    @app.get("/api/runs/{run_id}/alerts")
    def api_alerts(run_id: str) -> list[dict[str, Any]]:
        known_run(run_id)
        return [a.model_dump() for a in db.alerts(run_id=run_id)]

    @app.get("/api/runs/{run_id}/trajectories")
    def api_trajectories(
        run_id: str,
        step: int | None = None,
        passed: str | None = None,
        task: str | None = None,
        split: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> dict[str, Any]:
        known_run(run_id)
        filters = TrajectoryFilters(step, _bool(passed), task or None, split or None)
        rows = db.trajectory_rows(
            run_id, filters, limit=max(1, min(limit, 1000)), offset=max(0, offset)
        )
        return {
            "total": db.count_trajectory_rows(run_id, filters),
            "trajectories": [_dump(r) for r in rows],
        }

    @app.get("/api/runs/{run_id}/audit")
    def api_audit(run_id: str) -> dict[str, Any]:
        known_run(run_id)
        ctx = _audit_context(db, queue, run_id)
        return {
            "pending": [_dump(e) for e in ctx["pending"]],
            "labelled": [_dump(e) for e in ctx["labelled"]],
            "quarantined_tasks": sorted(ctx["quarantined_tasks"]),
            "quarantined_verifiers": sorted(ctx["quarantined_verifiers"]),
        }

    @app.get("/api/trajectories/{trajectory_id}")
    def api_trajectory(trajectory_id: str) -> dict[str, Any]:
        try:
            t = db.trajectory(trajectory_id)
        except StoreError:
            raise HTTPException(404, f"no trajectory {trajectory_id!r} in {db.path}") from None
        return {
            "trajectory": t.model_dump(mode="json"),
            "labels": [r.model_dump() for r in db.labels(trajectory_id)],
        }

    @app.post("/api/trajectories/{trajectory_id}/label")
    async def api_label(request: Request, trajectory_id: str) -> dict[str, Any]:
        _same_origin(request)
        body = await request.json()
        if not isinstance(body, dict):
            raise HTTPException(400, 'send a JSON object {"label": ..., "note": ...}')
        try:
            done = await run_in_threadpool(
                queue.label,
                trajectory_id,
                str(body.get("label", "")),
                str(body.get("note", "")),
                str(body.get("labeller", "")),
            )
        except ConfigError as e:
            code = 404 if "no audit item or trajectory" in str(e) else 400
            raise HTTPException(code, str(e)) from None
        return {
            "label": done.label.model_dump(),
            "item": done.item.model_dump(),
            "quarantined": [list(q) for q in done.quarantined],
        }

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


def api_endpoints(app: FastAPI) -> list[dict[str, Any]]:
    """The app's JSON endpoints from its OpenAPI schema: method, path, summary, parameters."""
    rows = []
    for path, methods in app.openapi().get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for method, op in methods.items():
            params = [p["name"] for p in op.get("parameters", [])]
            rows.append(
                {"method": method.upper(), "path": path, "summary": op.get("summary", ""),
                 "params": params}
            )  # fmt: skip
    return rows


def _same_origin(request: Request) -> None:
    """Refuse a POST sent by another site's page (a local dashboard is still reachable from a
    browser tab on any site); forms of this app send their own origin, scripts none."""
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, f"cross-site request from {origin} refused")


def _run_charts(db: TrackStore, run_id: str) -> dict[str, str]:
    c = db.curves(run_id)
    out = {
        "reward": charts.line_chart(
            [
                charts.Series("train", c["train reward"], charts.TRAIN),
                charts.Series("held-out", c["held-out reward"], charts.HELDOUT, dashed=True),
            ],
            title="Mean reward",
        ),
        "pass": charts.line_chart(
            [
                charts.Series("train", c["train pass rate"], charts.TRAIN),
                charts.Series("held-out", c["held-out pass rate"], charts.HELDOUT, dashed=True),
            ],
            title="Pass rate",
        ),
    }
    buckets = db.pass_by_difficulty(run_id)
    out["difficulty"] = charts.bar_chart(
        [b.label for b in buckets],
        [
            charts.BarSeries("train", [b.train[0] if b.train else None for b in buckets],
                             [b.train[1] if b.train else 0 for b in buckets], charts.TRAIN),
            charts.BarSeries("held-out", [b.heldout[0] if b.heldout else None for b in buckets],
                             [b.heldout[1] if b.heldout else 0 for b in buckets], charts.HELDOUT),
        ],
        title="Pass rate by difficulty",
        x_label="task difficulty estimate",
    )  # fmt: skip
    heat = db.task_heatmap(run_id)
    out["heatmap"] = charts.heatmap(
        heat.tasks,
        heat.buckets,
        heat.cells,
        row_links=[f"/runs/{run_id}?{urlencode({'task': t})}#trajectories" for t in heat.tasks],
        title="Pass rate by task over training (hardest first)",
    )
    minis = []
    series = db.metric_series(run_id)  # the held-out bars' metrics are drawn above, not here
    shown = [(n, p) for n, p in series.items() if not n.endswith(f"[{HELDOUT_DIFFICULTY_SPLIT}]")]
    for name, points in sorted(shown)[:24]:
        svg = charts.line_chart(
            [charts.Series(name, points)], title=name, y_range=None, width=300, height=150
        )
        minis.append(f"<figure class='mini'>{svg}</figure>")
    out["metrics"] = "".join(minis)
    return out


def _audit_context(db: TrackStore, queue: AuditQueue, run_id: str) -> dict[str, Any]:
    labels: dict[str, Any] = {}
    for row in db.labels():
        labels[row.trajectory_id] = row  # the latest label of each trajectory
    items = queue.items(run_id)
    rows = {r.id: r for r in db.rows_by_id([i.trajectory_id for i in items])}
    pending = [_Entry(i, rows.get(i.trajectory_id), None) for i in queue.pending(run_id)]
    done = [
        _Entry(i, rows.get(i.trajectory_id), labels.get(i.trajectory_id))
        for i in sorted(queue.labelled(run_id), key=lambda i: i.enqueued_at, reverse=True)
    ]
    return {
        "pending": pending,
        "labelled": done,
        "quarantined_tasks": queue.quarantined_tasks(),
        "quarantined_verifiers": queue.quarantined_verifiers(),
    }


class _Entry:
    """A queue item with its trajectory's row and latest label, for the audit page."""

    def __init__(self, item: Any, row: Any, label: Any) -> None:
        self.item, self.row, self.label = item, row, label

    def model_dump(self) -> dict[str, Any]:
        return {
            **self.item.model_dump(),
            "task_id": self.row.task_id if self.row else None,
            "step": self.row.step if self.row else None,
            "reward": self.row.reward if self.row else None,
            "label": self.label.model_dump() if self.label else None,
        }


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None  # JSON has no NaN


def _dump(value: Any) -> Any:
    """Dataclasses, pydantic rows and containers as JSON-able values."""
    if hasattr(value, "model_dump"):
        return _dump(value.model_dump())
    if hasattr(value, "__dataclass_fields__"):
        return {k: _dump(getattr(value, k)) for k in value.__dataclass_fields__}
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_dump(v) for v in value]
    if isinstance(value, float):
        return _finite(value)
    return value
