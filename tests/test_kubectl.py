"""The kubectl the tests use is one recent enough (tests.support.kubectl): an older one, such as
Debian 12's 1.20, is passed over with its version named."""

from __future__ import annotations

from pathlib import Path

from bundler.commands.kubectl_check import read_kubectl
from tests.support.kubectl import fake_kubectl, find_kubectl, pick


def test_an_old_kubectl_is_passed_over_naming_its_version(tmp_path: Path) -> None:
    old = fake_kubectl(tmp_path / "old", "v1.20.15")
    new = fake_kubectl(tmp_path / "new", "v1.27.0")
    assert pick([old, new]) == (new, "")
    path, why = pick([old])
    assert path is None
    assert why == (
        f"kubectl 1.27 or later is needed (`make test` installs one); found: 1.20 ({old})"
    )


def test_the_tests_have_a_recent_kubectl() -> None:
    path, why = find_kubectl()
    assert path is not None, why
    assert read_kubectl(path).recent
