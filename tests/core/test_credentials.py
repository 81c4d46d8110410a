"""Which workspace Secrets serve as registry credentials: the rule of bundler.core.credentials,
over the same table the manager's tests run end to end."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.credentials import credentials_refusal, refusal_message
from tests.support.builders import WS
from tests.support.manager.registry_charts import CREDENTIALS_RULE_CASES


@pytest.mark.parametrize(
    ("secret", "is_a_kubeconfig", "refusal"),
    [c[1:] for c in CREDENTIALS_RULE_CASES],
    ids=[c[0] for c in CREDENTIALS_RULE_CASES],
)
def test_the_rule(secret: dict[str, Any], is_a_kubeconfig: bool, refusal: str | None) -> None:
    kubeconfigs = {"creds": f"{WS}/victim"} if is_a_kubeconfig else {}
    why = credentials_refusal(secret, kubeconfigs)
    if refusal is None:
        assert why is None
    else:
        assert why is not None and refusal.format(ws=WS) in why
        message = refusal_message(WS, "creds", why)
        assert all(value not in message for value in secret["data"].values())
