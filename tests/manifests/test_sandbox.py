"""helm-python-sdk in a child process: what a normal chart renders is unchanged, a chart that
loops or allocates without end is stopped at the bound it hits, and one child serves a command.

No outcome here depends on how fast the machine is: a short render timeout is only ever given to
a chart that never ends, and every render that must finish (or must hit the memory limit first)
gets a timeout far beyond any load (ROOMY)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bundler.errors import TemplateError
from bundler.manifests.engine import ReleaseInput, SdkEngine, sdk_render
from bundler.manifests.sandbox import RenderLimits, RenderWorker
from bundler.oci.package import package
from tests.support.helm_repository import ENDLESS_LOOP, HUGE_STRING, write_chart

pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's Go SDK) is not installed")

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
"""
# For a chart that never ends: any timeout stops it, the short one quickly.
SHORT = RenderLimits(timeout_s=2, memory_mib=512)
# For every render that must finish, or hit the memory limit before any timeout.
ROOMY = RenderLimits(timeout_s=300, memory_mib=512)


def release(tmp_path: Path, name: str, files: dict[str, str] | None = None) -> ReleaseInput:
    chart = write_chart(tmp_path / name, name, "1.0.0", files)
    archive, _ = package(chart, tmp_path / name / "out")
    return ReleaseInput(archive, "rel", "apps", {"greeting": "hi"}, kube_version="v1.29.4")


@pytest.mark.parametrize(
    ("template", "limits", "bound"),
    [
        (ENDLESS_LOOP, SHORT, "rendering took longer than the --render-timeout of 2s"),
        (
            HUGE_STRING,
            ROOMY,
            "rendering needed more than the --render-memory limit of 512 MiB",
        ),
    ],
    ids=["endless-loop-hits-the-timeout", "huge-string-hits-the-memory-limit"],
)
def test_a_runaway_chart_is_stopped_at_the_bound_it_hits(
    tmp_path: Path, template: str, limits: RenderLimits, bound: str
) -> None:
    engine = SdkEngine(limits)
    with pytest.raises(TemplateError) as raised:
        engine.render(release(tmp_path, "runaway", {"templates/runaway.yaml": template}))
    assert raised.value.message.startswith(bound)
    engine.worker.stop()


def test_a_normal_chart_renders_as_in_process(tmp_path: Path) -> None:
    normal = release(tmp_path, "normal", {"crds/widget.yaml": CRD})
    engine = SdkEngine(ROOMY)
    assert engine.render(normal) == sdk_render(normal)
    engine.worker.stop()


def test_one_child_serves_every_render_until_a_bound_kills_it(tmp_path: Path) -> None:
    engine = SdkEngine(ROOMY)
    normal = release(tmp_path, "normal")
    runaway = release(tmp_path, "runaway", {"templates/runaway.yaml": HUGE_STRING})
    for _ in range(3):
        engine.render(normal)
    assert engine.worker.started == 1
    with pytest.raises(TemplateError, match="--render-memory"):
        engine.render(runaway)
    assert engine.render(normal) == sdk_render(normal)
    assert engine.worker.started == 2
    engine.worker.stop()


def test_a_template_error_keeps_the_child(tmp_path: Path) -> None:
    engine = SdkEngine(ROOMY)
    failing = release(
        tmp_path, "failing", {"templates/cm.yaml": '{{ required "size!" .Values.x }}'}
    )
    with pytest.raises(TemplateError, match="size!"):
        engine.render(failing)
    engine.render(release(tmp_path, "normal"))
    assert engine.worker.started == 1
    engine.worker.stop()


def test_the_answer_is_cut_just_past_the_cap(tmp_path: Path) -> None:
    worker = RenderWorker(ROOMY, max_text_chars=100)
    text = worker.render(release(tmp_path, "normal"))
    assert len(text) == 101
    worker.stop()
