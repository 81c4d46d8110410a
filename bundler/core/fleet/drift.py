"""Fleet's drift options as Flux's `driftDetection`: `correctDrift` (the GitRepo's, when enabled,
replacing the fleet.yaml's) as `mode: enabled`, a customization turning it off as `mode: warn`,
and `diff.comparePatches` as `ignore` rules (paths of jsonPointers and remove operations, the
Bundle's rules kept under a customization's, bundler replacing lists). What Flux has no
equivalent for is a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bundler.core.fleet.notes import Located, Notes
from bundler.errors import InvalidInputError


class FleetDrift:
    """The drift conversion of one fleet.yaml (`fleet`) under a GitRepo whose `correctDrift` is
    `gitrepo_correct_drift`; notes go to `notes`."""

    def __init__(
        self, fleet: Located, gitrepo_correct_drift: Mapping[str, Any] | None, notes: Notes
    ) -> None:
        self.fleet = fleet
        self.gitrepo_correct_drift = gitrepo_correct_drift
        self.notes = notes

    def drift(
        self, prefix: str, options: Mapping[str, Any], base_ignore: list[Any]
    ) -> dict[str, Any]:
        """driftDetection for a bundle's (or a customization's) `diff` and `correctDrift`."""
        drift: dict[str, Any] = {}
        correct = options.get("correctDrift")
        gitrepo = self.gitrepo_correct_drift
        if prefix == "" and gitrepo and gitrepo.get("enabled"):
            correct = gitrepo  # the GitRepo's, when enabled, replaces the fleet.yaml's
        if isinstance(correct, Mapping):
            if correct.get("enabled"):
                drift["mode"] = "enabled"
            elif prefix:
                drift["mode"] = "warn"  # the customization turns the Bundle's correction off
            for key in ("force", "keepFailHistory"):
                if correct.get(key):
                    self.notes.dropped(
                        self.fleet,
                        f"{prefix}correctDrift.{key}",
                        "no equivalent: Flux corrects drift by applying the release's objects "
                        "again, with no Helm rollback",
                    )
        patches = (options.get("diff") or {}).get("comparePatches") or []
        ignore = list(base_ignore)
        for index, patch in enumerate(patches):
            rule = self._ignore_rule(f"{prefix}diff.comparePatches[{index}]", patch)
            if rule is not None and rule not in ignore:
                ignore.append(rule)
        if ignore and (patches or prefix == ""):
            drift["ignore"] = ignore
        return drift

    def _ignore_rule(self, where: str, patch: Any) -> dict[str, Any] | None:
        if not isinstance(patch, Mapping):
            raise InvalidInputError("must be a mapping", obj=self.fleet.at(where))
        paths = [str(p) for p in patch.get("jsonPointers") or []]
        for index, operation in enumerate(patch.get("operations") or []):
            op = operation.get("op") if isinstance(operation, Mapping) else None
            if op == "remove" and operation.get("path"):
                paths.append(str(operation["path"]))
            else:
                self.notes.dropped(
                    self.fleet,
                    f"{where}.operations[{index}]",
                    f"the operation {op!r} has no equivalent: Flux's drift detection ignores "
                    "paths (a remove operation, or jsonPointers)",
                )
        if not paths:
            return None
        target: dict[str, str] = {}
        api_version = str(patch.get("apiVersion") or "")
        group, _, version = api_version.rpartition("/")
        if group:
            target["group"] = group
        if version:
            target["version"] = version
        for key in ("kind", "name", "namespace"):
            if patch.get(key):
                target[key] = str(patch[key])
        rule: dict[str, Any] = {"paths": paths}
        if target:
            rule["target"] = target
        return rule
