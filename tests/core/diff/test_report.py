from __future__ import annotations

from bundler.core.diff.deployments import DeploymentSide, FleetDiff, diff_fleet
from bundler.core.diff.report import headline, markdown_report, text_report

BUNDLE = "ws/demo"


def side(version: str, values: dict[str, object] | None = None) -> DeploymentSide:
    return DeploymentSide({"helm": {"chart": "demo", "version": version, "values": values or {}}})


def fleet(clusters: int) -> FleetDiff:
    old = {(BUNDLE, f"ws/c{i:02}"): side("1.0.0", {"x": 1}) for i in range(clusters)}
    new = {(BUNDLE, f"ws/c{i:02}"): side("2.0.0", {"x": 2}) for i in range(clusters)}
    return diff_fleet(old, new)


def test_text_names_bundle_then_each_cluster_with_its_changes() -> None:
    text = text_report(fleet(1))
    assert text.splitlines() == [
        "Bundle ws/demo: 1 changed",
        "  ~ ws/c00: chart 1.0.0 -> 2.0.0, 1 value",
        "      values.x: 1 -> 2",
        "1 deployments change in 1 bundle (0 unchanged)",
    ]


def test_text_is_coloured_only_when_asked() -> None:
    assert "\033[" not in text_report(fleet(1))
    assert "\033[33m  ~ ws/c00" in text_report(fleet(1), colour=True)


def test_headlines_say_created_removed_or_what_changed() -> None:
    made, gone = diff_fleet(
        {(BUNDLE, "ws/b"): side("1.0.0")}, {(BUNDLE, "ws/a"): side("2.0.0")}
    ).changes
    assert headline(made) == "created (chart 2.0.0)"
    assert headline(gone) == "removed (was chart 1.0.0)"


def test_markdown_counts_per_bundle_first_then_folds_clusters_beyond_the_limit() -> None:
    text = markdown_report(fleet(5), limit=2)
    assert text.index("| ws/demo | 0 | 0 | 5 |") < text.index("ws/c00")
    assert text.count("<details><summary><code>~</code>") == 2
    assert "<details><summary>3 more deployments change</summary>" in text
    assert "ws/c04" in text


def test_markdown_of_no_change_is_one_line() -> None:
    same = {(BUNDLE, "ws/a"): side("1.0.0")}
    assert markdown_report(diff_fleet(same, same)).strip() == (
        "### bundler diff: no change (1 deployments unchanged)"
    )


def test_markdown_details_are_cut_to_fit_a_comment() -> None:
    old = {(BUNDLE, "ws/a"): side("1.0.0", {f"k{i}": i for i in range(2000)})}
    new = {(BUNDLE, "ws/a"): side("1.0.0", {})}
    text = markdown_report(diff_fleet(old, new))
    assert len(text) < 6000 and "... (cut; run bundler diff)" in text
