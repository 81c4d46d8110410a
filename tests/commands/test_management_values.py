"""Management values (`valuesFrom` with `source: Management`) in the offline commands: an object
among the inputs is delivered as the manager delivers it (its digest in the options), one that is
not is a warning naming the Bundle, the field and the object, one not meant for delivery is an
error; `diff --live` reads them on the management cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import BUNDLE_DEPLOYMENT, NAMESPACE, SECRET
from bundler.apiserver import ApiServer
from tests.support.cli_helpers import run_cli
from tests.support.commands.chart_fleet import WORKSPACE, bundle, cluster, write_fleet
from tests.support.values_objects import management, values_config_map, values_secret

REPO = "https://charts.example"
PROD = cluster("prod-1", {"env": "prod"})
FROM_MANAGEMENT = [
    management("ConfigMap", "defaults"),
    management("Secret", "db", valuesKey="password", targetPath="db.password"),
]


def in_ws(obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["namespace"] = WORKSPACE
    return obj


def app(**helm: Any) -> dict[str, Any]:
    found = bundle("web", REPO, "web", "1.0.0", {"replicas": 1})
    found["spec"]["helm"].update(helm)
    return found


def secret(password: str, **labels: str) -> dict[str, Any]:
    return in_ws(values_secret("db", {"password": password}, labels=labels or None))


def render(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, list[Any], str]:
    code, out, err = run_cli(capsys, "render", "-f", str(path), "--flux", "-o", "json")
    return code, json.loads(out)["items"] if out else [], err


def test_render_delivers_what_the_inputs_hold_and_names_the_copies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [PROD, app(valuesFrom=FROM_MANAGEMENT), in_ws(values_config_map("defaults"))]
    fleet = write_fleet(tmp_path / "fleet.yaml", *docs, secret("one"))
    code, items, err = render(capsys, fleet)
    assert (code, err) == (0, "")
    bd, _source, release = items
    delivered = bd["spec"]["options"]["managementValues"]
    assert [(d["kind"], d["name"]) for d in delivered] == [
        ("ConfigMap", "defaults"),
        ("Secret", "db"),
    ]
    assert [e["name"] for e in release["spec"]["valuesFrom"]] == [
        d["secretName"] for d in delivered
    ]
    assert "source" not in json.dumps(release["spec"]["valuesFrom"])
    assert "one" not in json.dumps(items)  # the Secret's data is never printed

    changed = write_fleet(tmp_path / "changed.yaml", *docs, secret("two"))
    _, other, _ = render(capsys, changed)
    assert other[0]["spec"]["deploymentID"] != bd["spec"]["deploymentID"]


def test_an_object_not_among_the_inputs_is_left_out_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fleet = write_fleet(tmp_path / "fleet.yaml", PROD, app(valuesFrom=FROM_MANAGEMENT))
    code, items, err = render(capsys, fleet)
    assert code == 0
    assert err.splitlines() == [
        f"warning: Bundle {WORKSPACE}/web: spec.helm.valuesFrom[{i}]: {kind} {WORKSPACE}/{name} "
        "(source: Management) is not found among the inputs (give it as an input document; the "
        "management cluster is not read): its values are left out of the options, so the "
        "deploymentID shown is not the one the manager writes"
        for i, (kind, name) in enumerate([("ConfigMap", "defaults"), ("Secret", "db")])
    ]
    bd, _source, release = items
    assert "managementValues" not in bd["spec"]["options"]
    assert "valuesFrom" not in release["spec"]


def test_an_object_not_meant_for_delivery_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    unlabelled = in_ws(values_secret("db", {"password": "p"}, labels={}))
    fleet = write_fleet(
        tmp_path / "fleet.yaml", PROD, app(valuesFrom=FROM_MANAGEMENT[1:]), unlabelled
    )
    code, items, err = render(capsys, fleet)
    assert code == 1
    assert items == []
    assert err.startswith(
        f"error: Bundle {WORKSPACE}/web: spec.helm.valuesFrom[0]: Secret {WORKSPACE}/db is not "
        "delivered to clusters: it is not labelled bundler.dev/deliver=true; "
    )


def test_explain_shows_the_delivered_objects_in_the_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [PROD, app(valuesFrom=FROM_MANAGEMENT), secret("one")]
    fleet = write_fleet(tmp_path / "fleet.yaml", *docs)
    code, out, err = run_cli(
        capsys, "explain", "-f", str(fleet), "--bundle", f"{WORKSPACE}/web",
        "--cluster", f"{WORKSPACE}/prod-1", "-o", "json",
    )  # fmt: skip
    assert code == 0
    delivered = json.loads(out)["options"]["managementValues"]
    assert [(d["kind"], d["name"]) for d in delivered] == [("Secret", "db")]
    assert f"ConfigMap {WORKSPACE}/defaults (source: Management) is not found" in err


def test_diff_shows_a_changed_object_as_a_new_digest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = [PROD, app(valuesFrom=FROM_MANAGEMENT[1:])]
    old = write_fleet(tmp_path / "old" / "fleet.yaml", *docs, secret("one"))
    new = write_fleet(tmp_path / "new" / "fleet.yaml", *docs, secret("two"))
    code, out, err = run_cli(
        capsys, "diff", "--from", str(old), "--to", str(new), "-o", "json", "--exit-code"
    )
    assert (code, err) == (1, "")
    (change,) = json.loads(out)["deployments"]
    assert change["change"] == "changed"
    paths = {o["path"] for o in change["options"]}
    assert "managementValues[0].digest" in paths
    assert "one" not in out and "two" not in out


def test_diff_live_reads_the_objects_on_the_management_cluster(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    inputs = write_fleet(tmp_path / "fleet.yaml", PROD, app(valuesFrom=FROM_MANAGEMENT[1:]))
    with_secret = write_fleet(tmp_path / "render.yaml", PROD, app(valuesFrom=FROM_MANAGEMENT[1:]),
                              secret("one"))  # fmt: skip
    _, rendered, _ = render(capsys, with_secret)
    with ApiServer() as server:
        server.store.create(NAMESPACE, {"metadata": {"name": WORKSPACE}})
        server.store.create(SECRET, secret("one"))
        for bd in (i for i in rendered if i["kind"] == "BundleDeployment"):
            server.store.create(NAMESPACE, {"metadata": {"name": bd["metadata"]["namespace"]}})
            server.store.create(BUNDLE_DEPLOYMENT, bd)
        kubeconfig = str(server.kubeconfig(tmp_path / "kubeconfig"))
        live = ("diff", "--live", "--kubeconfig", kubeconfig, "--to", str(inputs), "-o", "json")
        code, out, err = run_cli(capsys, *live, "--exit-code")
        assert (code, err) == (0, "")  # the inputs lack the Secret; the cluster has it
        assert json.loads(out)["deployments"] == []
        server.store.delete(SECRET, "db", WORKSPACE)
        code, out, err = run_cli(capsys, *live)
    assert code == 0
    assert (
        f"warning: new: Bundle {WORKSPACE}/web: spec.helm.valuesFrom[0]: Secret {WORKSPACE}/db "
        "(source: Management) is not found on the management cluster: the manager holds the "
        "Bundle (ValuesNotFound) until it exists"
    ) in err
