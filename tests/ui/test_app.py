"""The dashboard's pages and JSON endpoints, through FastAPI's test client."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from referee.errors import StoreError
from referee.track import TrackStore
from referee.ui import create_app

RUN = "grpo-curriculum"


@pytest.fixture
def client(store: TrackStore) -> TestClient:
    return TestClient(create_app(store))


def flagged_item(store: TrackStore):
    return next(i for i in store.audit_items(run_id=RUN) if i.reason == "static_flag")


def test_runs_page_lists_every_run_with_its_numbers(client, store):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    for run in store.runs():
        assert run.name and run.name in html and f'href="/runs/{run.run_id}"' in html
    assert "finished" in html and "running" in html
    assert html.count("<svg") >= 2  # a sparkline per run
    assert re.search(r"\d+%", html)  # pass rates


def test_run_page_draws_curves_bars_heatmap_and_lists_alerts(client, store):
    html = client.get(f"/runs/{RUN}").text
    for chart in ("chart-reward", "chart-pass", "chart-difficulty", "chart-heatmap"):
        figure = html.split(f'id="{chart}"', 1)[1].split("</figure>", 1)[0]
        assert "<svg" in figure, chart
    curves = html.split('id="chart-pass"', 1)[1].split("</figure>", 1)[0]
    assert "data-series='train'" in curves and "data-series='held-out'" in curves
    assert "class='cell'" in html and "class='bar'" in html
    for alert in store.alerts(run_id=RUN):
        assert alert.message.replace("'", "&#39;") in html and alert.detector in html
    assert "exit-call" in html  # the evidence of the static-flag alert
    assert 'id="trajectory-list"' in html and "/trajectories/" in html


def test_run_page_filters_and_pages_the_trajectory_list(client, store):
    task = store.trajectories(run_id=RUN, limit=1)[0].task_id
    html = client.get(f"/runs/{RUN}", params={"task": task, "passed": "true"}).text
    rows = re.findall(r'<tr class="link" data-href="/trajectories/(\w+)"', html)
    assert rows
    for tid in rows:
        t = store.trajectory(tid)
        assert t.task_id == task and t.passed
    second = client.get(f"/runs/{RUN}", params={"page_no": 1}).text
    assert "page 2 of" in second
    assert client.get(f"/runs/{RUN}", params={"passed": "maybe"}).status_code == 400


def test_trajectory_viewer_shows_turns_tools_tests_flags_and_the_alert(client, store):
    item = flagged_item(store)
    t = store.trajectory(item.trajectory_id)
    html = client.get(f"/trajectories/{t.id}").text
    assert t.task_id in html and t.id in html
    assert "test_negative" in html and "passed" in html  # the verdict per test
    assert "tool call" in html and "run_tests" in html and "sys.exit(0)" in html
    assert "visible tests passed" in html  # the observation
    assert "exit-call" in html  # the flag
    alert = next(a for a in store.alerts(run_id=RUN) if t.id in a.trajectory_ids)
    assert alert.message.replace("'", "&#39;") in html
    assert "total_s" in html  # timings
    assert f'action="/trajectories/{t.id}/label"' in html
    for label in ("legitimate", "hack", "broken-task", "broken-verifier"):
        assert f'value="{label}"' in html


def test_posting_the_label_form_records_it_quarantines_and_redirects_back(client, store):
    item = flagged_item(store)
    t = store.trajectory(item.trajectory_id)
    r = client.post(
        f"/trajectories/{t.id}/label",
        data={"label": "hack", "note": "exits <early>", "labeller": "ada"},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == f"/trajectories/{t.id}?labelled=1"
    [label] = store.labels(t.id)
    assert (label.label, label.note, label.labeller) == ("hack", "exits <early>", "ada")
    assert t.task_id in store.quarantined("task")
    assert next(i for i in store.audit_items() if i.id == item.id).status == "labelled"
    html = client.get(r.headers["location"]).text
    assert "Label recorded" in html and "quarantined" in html
    assert "exits &lt;early&gt;" in html and "<early>" not in html  # escaped
    audit = client.get(f"/runs/{RUN}/audit").text
    labelled = audit.split('id="labelled"', 1)[1]
    assert t.id[:10] in labelled and "hack" in labelled


def test_a_bad_label_is_shown_not_recorded(client, store):
    tid = flagged_item(store).trajectory_id
    r = client.post(f"/trajectories/{tid}/label", data={"label": "nonsense"})
    assert r.status_code == 200 and "unknown audit label" in r.text
    assert store.labels() == []


def test_cross_site_posts_are_refused(client, store):
    tid = flagged_item(store).trajectory_id
    r = client.post(f"/trajectories/{tid}/label", data={"label": "hack"},
                    headers={"origin": "http://evil.example"})  # fmt: skip
    assert r.status_code == 403 and store.labels() == []


def test_audit_page_lists_pending_items_flagged_first_with_links(client, store):
    html = client.get(f"/runs/{RUN}/audit").text
    pending = html.split('id="pending"', 1)[1].split('id="labelled"', 1)[0]
    reasons = re.findall(
        r'<span class="pill (?:flagged|random)" title="[^"]*">([^<]+)</span>', pending
    )
    assert reasons and reasons[0] != "random" and "random" in reasons
    assert reasons.index("random") > max(i for i, r in enumerate(reasons) if r != "random")
    first = flagged_item(store)
    assert f'href="/trajectories/{first.trajectory_id}"' in pending


def test_the_fill_button_enqueues_and_reports(client, store):
    before = len(store.audit_items(run_id="grpo-uniform"))
    r = client.post("/runs/grpo-uniform/audit/fill", follow_redirects=False)
    assert r.status_code == 303 and "filled=" in r.headers["location"]
    assert len(store.audit_items(run_id="grpo-uniform")) > before
    assert "trajectories added to the queue" in client.get(r.headers["location"]).text


@pytest.mark.parametrize(
    "path", ["/runs/nope", "/runs/nope/audit", "/trajectories/nope", "/static/nope.css"]
)
def test_unknown_ids_get_a_readable_404_page(client, path):
    r = client.get(path)
    assert r.status_code == 404
    if not path.startswith("/static"):
        assert "Not found" in r.text and "nope" in r.text and "Back to the runs" in r.text


def test_json_endpoints(client, store):
    runs = client.get("/api/runs").json()
    assert [r["run_id"] for r in runs] == ["grpo-curriculum", "grpo-uniform"]
    assert runs[0]["trajectories"] == store.count_trajectories(run_id=RUN)
    assert client.get(f"/api/runs/{RUN}").json()["config"]["sampler"] == "curriculum"
    metrics = client.get(f"/api/runs/{RUN}/metrics", params={"name": "pass_rate"}).json()
    assert metrics and {m["name"] for m in metrics} == {"pass_rate"}
    curves = client.get(f"/api/runs/{RUN}/curves").json()
    assert curves["curves"]["train pass rate"] and curves["heatmap"]["tasks"]
    alerts = client.get(f"/api/runs/{RUN}/alerts").json()
    assert {a["detector"] for a in alerts} >= {"static_flag"}
    page = client.get(f"/api/runs/{RUN}/trajectories", params={"limit": 5}).json()
    assert page["total"] == runs[0]["trajectories"] and len(page["trajectories"]) == 5
    tid = page["trajectories"][0]["id"]
    assert client.get(f"/api/trajectories/{tid}").json()["trajectory"]["id"] == tid
    audit = client.get(f"/api/runs/{RUN}/audit").json()
    assert audit["pending"] and audit["labelled"] == []
    for path in ("/api/runs/nope", "/api/trajectories/nope", "/api/runs/nope/metrics"):
        r = client.get(path)
        assert r.status_code == 404 and "nope" in r.json()["error"]


def test_json_label_endpoint(client, store):
    tid = flagged_item(store).trajectory_id
    r = client.post(f"/api/trajectories/{tid}/label", json={"label": "broken-verifier"})
    assert r.status_code == 200 and r.json()["quarantined"] == [["verifier", "function-v1"]]
    assert store.quarantined("verifier") == {"function-v1"}
    bad = client.post(f"/api/trajectories/{tid}/label", json={"label": "meh"})
    assert bad.status_code == 400 and "legitimate" in bad.json()["error"]
    assert client.post("/api/trajectories/nope/label", json={"label": "hack"}).status_code == 404


def test_pages_fetch_nothing_from_the_network(client, store):
    tid = flagged_item(store).trajectory_id
    for path in ("/", f"/runs/{RUN}", f"/trajectories/{tid}", f"/runs/{RUN}/audit"):
        html = client.get(path).text
        # Every src and stylesheet is the app's own (the SVG namespace is an identifier).
        assert not re.search(r'(src|href)="(https?:)?//', html), path
    assert client.get("/static/style.css").status_code == 200
    assert client.get("/static/app.js").status_code == 200


def test_a_folder_without_a_store_is_refused(tmp_path):
    with pytest.raises(StoreError, match="no track store"):
        create_app(tmp_path)


def test_referee_ui_refuses_a_folder_without_a_store(tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app

    r = CliRunner().invoke(app, ["ui", "--run", str(tmp_path / "none")])
    assert r.exit_code == 2 and "no track store" in r.output and "TrackStore" in r.output


# --- the charts -------------------------------------------------------------------------------


def test_charts_escape_text_and_survive_empty_and_nan_data():
    from referee.ui import charts

    svg = charts.line_chart([charts.Series("<b>&", [(0, 0.5), (1, float("nan")), (2, 0.7)]),
                             charts.Series("held-out", [])], title="a < b")  # fmt: skip
    assert "<b>" not in svg and "&lt;b&gt;&amp;" in svg and "a &lt; b" in svg
    assert svg.count("<circle") == 2  # the NaN point is left out
    assert "no data yet" in charts.line_chart([charts.Series("x", [])])
    assert "<path" not in charts.sparkline([(0, 0.5)])  # one point is no trend
    bars = charts.bar_chart(["0.0-0.2", "x"], [charts.BarSeries("train", [0.5, None], [4, 0])])
    assert bars.count("class='bar'") == 1
    cells = charts.heatmap(["t/<1>"], ["0-4", "5-9"], [[(1, 2), None]], row_links=["/a?b=1&c"])
    assert "t/&lt;1&gt;" in cells and "not sampled" in cells and "href='/a?b=1&amp;c'" in cells
    assert charts.pass_colour(0) == "#dc2626" and charts.pass_colour(1) == "#16a34a"


def test_the_docstring_examples_hold():
    import doctest

    from referee.track import audit
    from referee.ui import charts, views

    for module in (charts, views, audit):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_a_run_with_nothing_logged_yet_still_renders(tmp_path):
    from referee.rollout.trajectory import Trajectory

    store = TrackStore(tmp_path / "fresh")
    store.start_run("r0", {"lr": 1e-5})
    # No step, no verdict: an evaluation-only trajectory that ended in an error.
    store.log_trajectory(
        Trajectory(id="lonely", run_id="r0", task_id="t/x", policy="p", env="code")
    )
    client = TestClient(create_app(store))
    html = client.get("/runs/r0").text
    assert "no data yet" in html and "lonely"[:6] in html
    assert client.get("/").status_code == 200
    viewer = client.get("/trajectories/lonely").text
    assert "No verdict was reached" in viewer and "No turns" in viewer
    assert client.get("/runs/r0/audit").status_code == 200
    assert client.get("/api/runs/r0/curves").json()["heatmap"]["tasks"] == []


def test_pages_show_whole_trajectory_ids_as_audit_takes_them(client, store):
    # issue 20 (8): the pages cut ids to 10 (lists) and 8 (titles, alert links) characters,
    # and `referee audit --id` did not take them.
    run_page = client.get(f"/runs/{RUN}").text
    listed = run_page.split('id="trajectory-list"', 1)[1].split("</table>", 1)[0]
    shown = re.findall(r'class="mono tid" href="/trajectories/([^"]+)">([^<]+)</a>', listed)
    assert shown and all(text == tid and store.trajectory(tid) for tid, text in shown)
    for alert in store.alerts(run_id=RUN):
        for tid in alert.trajectory_ids[:12]:
            assert f">{tid}</a>" in run_page
    audit_page = client.get(f"/runs/{RUN}/audit").text
    first = flagged_item(store).trajectory_id
    assert f">{first}</a>" in audit_page
    assert (
        f"<title>trajectory {first} · referee</title>" in client.get(f"/trajectories/{first}").text
    )
    linked = re.findall(  # every id shown as a link (not "Label the next one")
        r'class="mono[^"]*" href="/trajectories/([^"/]+)">([^<]+)</a>', run_page + audit_page
    )
    assert linked and all(text == tid for tid, text in linked)


def test_run_page_shows_the_runs_cost_and_the_api_serves_it(client, store):
    from referee.track.cost import cost_report

    report = cost_report(store, RUN)
    c = report.total.cost
    assert c.sandbox_cpu_s > 0 and c.tokens > 0 and c.bytes_stored > 0
    html = client.get(f"/runs/{RUN}").text
    card = html.split('id="cost"', 1)[1].split('<div class="card', 1)[0]
    assert f"{c.sandbox_cpu_s:.2f} s" in card
    assert f"{c.prompt_tokens} / {c.completion_tokens}" in card
    per = report.per_pass()
    assert per is not None and f"{per['sandbox_cpu_s']:.3f} s" in card
    assert 'id="cost-table"' in card and report.by_task[0].key in card
    data = client.get(f"/api/runs/{RUN}/cost").json()
    assert data["total"]["sandbox_cpu_s"] == c.sandbox_cpu_s
    assert data["total"]["rollouts"] == store.count_trajectories(run_id=RUN)
    assert client.get("/api/runs/nope/cost").status_code == 404
