"""The Kubernetes manifests in ``deploy/k8s/``, validated against their schemas, offline.

Kubernetes' own kinds against the schemas ``kubernetes-validate`` ships (strict: an unknown
field fails); KubeRay's ``RayCluster`` against the subset of its CRD in
``deploy/k8s/schemas/raycluster-v1.json``, and its pod templates against Kubernetes'
``PodTemplateSpec``. Then what the manifests say about referee itself: the task file parses,
the arguments are ``referee serve``'s, the probes hit its health route.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
KUBERNETES = "1.37.0"
RAYCLUSTER = json.loads((K8S / "schemas" / "raycluster-v1.json").read_text())
MANIFESTS = sorted(K8S.glob("*.yaml"))


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _all() -> list[dict[str, Any]]:
    return [d for path in MANIFESTS for d in _docs(path)]


def _kind(kind: str) -> dict[str, Any]:
    [doc] = [d for d in _all() if d["kind"] == kind]
    return doc


def validate(doc: dict[str, Any]) -> None:
    """Raise when ``doc`` does not fit its schema."""
    if doc.get("apiVersion", "").startswith("ray.io/"):
        jsonschema.Draft202012Validator(RAYCLUSTER).validate(doc)
        spec = doc["spec"]
        for group in [spec["headGroupSpec"], *spec.get("workerGroupSpecs", [])]:
            as_kind = {
                "apiVersion": "v1",
                "kind": "PodTemplate",
                "metadata": {"name": "template"},
                "template": group["template"],
            }
            kubernetes_validate.validate(as_kind, KUBERNETES, strict=True)
        return
    kubernetes_validate.validate(doc, KUBERNETES, strict=True)


def test_there_are_manifests_for_the_service_and_a_raycluster():
    kinds = {d["kind"] for d in _all()}
    assert {"Deployment", "Service", "ConfigMap", "Secret", "RayCluster"} <= kinds


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_every_manifest_fits_its_schema(path):
    for doc in _docs(path):
        validate(doc)


@pytest.mark.parametrize(
    ("kind", "edit", "message"),
    [
        ("Deployment", lambda d: d["spec"]["template"]["spec"]["containers"][0].update(
            readinesProbe={}), "readinesProbe"),
        ("Service", lambda d: d["spec"]["ports"][0].update(port="http"), "'http'"),
        ("RayCluster", lambda d: d["spec"].update(workerGroupSpec=[]), "workerGroupSpec"),
        ("RayCluster", lambda d: d["spec"]["headGroupSpec"]["rayStartParams"].update(
            {"num-cpus": 0}), "0 is not of type 'string'"),
        ("RayCluster", lambda d: d["spec"]["autoscalerOptions"].update(upscalingMode="Fast"),
         "'Fast'"),
        ("RayCluster", lambda d: d["spec"]["workerGroupSpecs"][0]["template"]["spec"][
            "containers"][0].update(image=7), "7 is not of type 'string'"),
    ],
)  # fmt: skip
def test_the_validation_refuses_a_broken_manifest(kind, edit, message):
    doc = copy.deepcopy(_kind(kind))
    edit(doc)
    with pytest.raises(jsonschema.ValidationError, match=message):
        validate(doc)


def test_the_configmaps_task_file_is_a_task_file(tmp_path):
    from referee.tasks.model import read_tasks

    path = tmp_path / "tasks.jsonl"
    path.write_text(_kind("ConfigMap")["data"]["tasks.jsonl"])
    [task] = read_tasks(path)
    assert task.id == "HumanEval/53"


def test_the_deployment_runs_referee_serve_with_its_own_options():
    from typer.testing import CliRunner

    from referee.cli import app

    deployment = _kind("Deployment")
    pod = deployment["spec"]["template"]
    [container] = pod["spec"]["containers"]
    assert container["args"][0] == "serve"
    help_text = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    for arg in container["args"][1:]:
        assert arg.split("=")[0] in help_text, arg
    # The volumes hold the files the arguments name.
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert "--tasks=" + mounts["tasks"] + "/tasks.jsonl" in container["args"]
    assert "--tokens=" + mounts["tokens"] + "/tokens.txt" in container["args"]
    # Probes on the service's unauthenticated health route, on the port it listens on.
    port = next(a for a in container["args"] if a.startswith("--port=")).split("=")[1]
    assert container["ports"][0]["containerPort"] == int(port)
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["path"] == "/health"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    # The Service selects these pods.
    service = _kind("Service")
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert (
        deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    )


def test_the_rayclusters_workers_offer_the_pools_resource():
    cluster = _kind("RayCluster")
    [group] = cluster["spec"]["workerGroupSpecs"]
    resources = json.loads(json.loads(group["rayStartParams"]["resources"]))
    assert resources == {"sandbox": 1}
    assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
    assert cluster["spec"]["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
