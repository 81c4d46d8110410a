"""Deployment IDs: the sha256 of the canonical JSON of a BundleDeployment's options.

Canonical = sorted keys, no insignificant white space, UTF-8. The same options always give the same
ID whatever the key order of the input; any change to the options gives a new one.

Planning hands the same options model to every cluster that renders alike, so the ID of a model
is kept by the model's identity (models are never changed in place): options are serialised once
per distinct model, not once per BundleDeployment.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from bundler.api.bundledeployment import DeploymentOptions

#: How many options models' IDs are kept.
MAX_REMEMBERED = 8192

_lock = threading.Lock()
# id(options) -> (the options, to keep the id unique; its ID), oldest first
_remembered: dict[int, tuple[DeploymentOptions, str]] = {}


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def deployment_id(options: DeploymentOptions) -> str:
    known = _remembered.get(id(options))
    if known is not None and known[0] is options:
        return known[1]
    digest = hashlib.sha256(canonical_json(options.to_wire()).encode("utf-8")).hexdigest()
    found = f"s-{digest}"
    with _lock:
        _remembered[id(options)] = (options, found)
        while len(_remembered) > MAX_REMEMBERED:
            del _remembered[next(iter(_remembered))]
    return found
