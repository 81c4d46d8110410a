"""The Helm options of a Fleet helm block (a fleet.yaml's, a customization's) as a bundler
Bundle's, the chart aside: values (bundler.core.fleet.values), and the Helm behaviour Fleet asks
for written as Flux's equivalent: `force` is `upgrade.force`, `atomic` remediates the failed
action (uninstall, rollback) once without retrying, no `takeOwnership` is `disableTakeOwnership`
(Flux adopts existing objects unless told, Helm and Fleet do not), `timeoutSeconds` the release
`timeout`, `skipSchemaValidation` the actions' `disableSchemaValidation`, `disablePreProcess`
`disableTemplating`. Fields with no equivalent are notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bundler.core.fleet.notes import Located, Notes
from bundler.core.fleet.values import FleetValues

# The fields of a helm block a Bundle has an equivalent for (the rest is reported).
_HELM_CONVERTED = frozenset(
    {
        "chart",
        "repo",
        "version",
        "releaseName",
        "values",
        "valuesFiles",
        "valuesFrom",
        "templateValues",
        "force",
        "atomic",
        "takeOwnership",
        "timeoutSeconds",
        "maxHistory",
        "skipSchemaValidation",
        "disablePreProcess",
        "waitForJobs",
        "disableDependencyUpdate",
        # Flux never lets a chart's templates resolve host names: what disableDNS asks
        "disableDNS",
    }
)


class FleetHelm:
    """The helm-options conversion of one fleet.yaml (`fleet`); notes go to `notes`."""

    def __init__(self, fleet: Located, values: FleetValues, notes: Notes) -> None:
        self.fleet = fleet
        self.values = values
        self.notes = notes

    def options(
        self, path: str, raw: Mapping[str, Any], *, templating: bool, base: bool
    ) -> dict[str, Any]:
        """bundler's helm options for the helm block at `path` (the chart aside)."""
        out: dict[str, Any] = {}
        for key in raw:
            if key not in _HELM_CONVERTED:
                self.notes.dropped(self.fleet, f"{path}.{key}", "no equivalent in bundler")
        if raw.get("releaseName"):
            out["releaseName"] = raw["releaseName"]
        values = self.values.values(path, raw, templating=templating)
        if values:
            out["values"] = values
        values_from = self.values.values_from(path, raw.get("valuesFrom"), has_values=bool(values))
        if values_from:
            out["valuesFrom"] = values_from
        if raw.get("disablePreProcess"):
            out["disableTemplating"] = True
        actions = self._actions(path, raw, base=base)
        out.update(actions)
        timeout = raw.get("timeoutSeconds")
        if isinstance(timeout, int) and timeout > 0:
            out["timeout"] = f"{timeout}s"
        elif isinstance(timeout, int) and timeout < 0:
            self.notes.dropped(
                self.fleet,
                f"{path}.timeoutSeconds",
                "a negative timeout resets the Bundle's in Fleet; a target of bundler can only "
                "set one",
            )
        if isinstance(raw.get("maxHistory"), int):
            out["maxHistory"] = raw["maxHistory"]
        return out

    def _actions(self, path: str, raw: Mapping[str, Any], *, base: bool) -> dict[str, Any]:
        """install/upgrade settings for Fleet's Helm flags."""
        install: dict[str, Any] = {}
        upgrade: dict[str, Any] = {}
        if raw.get("force"):
            upgrade["force"] = True
        if raw.get("atomic"):
            install["remediation"] = {"remediateLastFailure": True}
            upgrade["remediation"] = {"remediateLastFailure": True, "strategy": "rollback"}
        if raw.get("takeOwnership"):
            if not base:  # the Bundle's said no: the customization says yes
                install["disableTakeOwnership"] = upgrade["disableTakeOwnership"] = False
        elif base:
            install["disableTakeOwnership"] = upgrade["disableTakeOwnership"] = True
        if raw.get("skipSchemaValidation"):
            install["disableSchemaValidation"] = upgrade["disableSchemaValidation"] = True
        out: dict[str, Any] = {}
        if install:
            out["install"] = install
        if upgrade:
            out["upgrade"] = upgrade
        return out
