"""Deployment IDs: the sha256 of the canonical JSON of a BundleDeployment's options.

Canonical = sorted keys, no insignificant white space, UTF-8. The same options always give the same
ID whatever the key order of the input; any change to the options gives a new one.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from bundler.api.bundledeployment import DeploymentOptions


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def deployment_id(options: DeploymentOptions) -> str:
    digest = hashlib.sha256(canonical_json(options.to_wire()).encode("utf-8")).hexdigest()
    return f"s-{digest}"
