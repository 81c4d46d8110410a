"""Injected failures: by chart version, by cluster label, at a seeded rate; always reproducible."""

from __future__ import annotations

import pytest

from bundler.errors import InvalidInputError
from bundler.sim.failures import FailurePolicy, ReleaseIdentity, parse_label


def release(version: str = "1.0.0", cluster: str = "ws/c1", **labels: str) -> ReleaseIdentity:
    return ReleaseIdentity(cluster, labels, "apps/app", version)


@pytest.mark.parametrize(
    ("policy", "identity", "fails_because"),
    [
        (FailurePolicy(), release(), None),
        (FailurePolicy(versions=frozenset({"6.1.0"})), release("6.1.0"), "chart version 6.1.0"),
        (FailurePolicy(versions=frozenset({"6.1.0"})), release("6.1.1"), None),
        (FailurePolicy(labels={"env": "prod"}), release(env="prod"), "env=prod"),
        (FailurePolicy(labels={"env": "prod"}), release(env="dev"), None),
        (FailurePolicy(labels={"env": "prod", "region": "eu"}), release(env="prod"), None),
        (FailurePolicy(rate=1.0), release(), "rate 1"),
        (FailurePolicy(rate=0.0), release(), None),
    ],
    ids=[
        "nothing-injected",
        "version-matches",
        "other-version",
        "label-matches",
        "other-label",
        "every-label-must-match",
        "rate-one",
        "rate-zero",
    ],
)
def test_failure(
    policy: FailurePolicy, identity: ReleaseIdentity, fails_because: str | None
) -> None:
    reason = policy.failure(identity)
    if fails_because is None:
        assert reason is None
    else:
        assert reason is not None and fails_because in reason


def test_rate_is_reproducible_and_about_right() -> None:
    policy = FailurePolicy(rate=0.25, seed=7)
    clusters = [release(cluster=f"ws/c{i}") for i in range(2000)]
    first = [policy.failure(c) is not None for c in clusters]
    again = [policy.failure(c) is not None for c in clusters]
    other_seed = [FailurePolicy(rate=0.25, seed=8).failure(c) is not None for c in clusters]
    assert first == again
    assert first != other_seed
    assert 400 < sum(first) < 600


@pytest.mark.parametrize("rate", [-0.1, 1.5], ids=["negative", "above-one"])
def test_rate_out_of_range_is_invalid(rate: float) -> None:
    with pytest.raises(InvalidInputError, match="between 0 and 1"):
        FailurePolicy(rate=rate)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("env=prod", ("env", "prod")), ("tier=", ("tier", ""))],
    ids=["key-value", "empty-value"],
)
def test_parse_label(text: str, parsed: tuple[str, str]) -> None:
    assert parse_label(text) == parsed


@pytest.mark.parametrize("text", ["env", "=prod"], ids=["no-equals", "no-key"])
def test_parse_label_rejects(text: str) -> None:
    with pytest.raises(InvalidInputError, match="KEY=VALUE"):
        parse_label(text)
