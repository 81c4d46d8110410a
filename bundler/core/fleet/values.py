"""The values of a Fleet helm block as a bundler Bundle's: `values`, the `valuesFiles` merged over
them in order (each file over what is before it, as Fleet merges them), then `templateValues`,
which replace the top-level keys they name; Fleet's Go templates converted
(bundler.core.templating.gotemplate) unless `disablePreProcess`, and
`global.fleet.clusterLabels.NAME` as the label (or "" when the cluster lacks it), as Fleet
documents; `valuesFrom` as Flux's.
Whatever is not converted, or converted with a difference in meaning, is a note.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from bundler import yamlload
from bundler.core.fleet.notes import Located, Notes
from bundler.core.merge import deep_merge
from bundler.core.templating.gotemplate import (
    FLEET_LABEL_PREFIX,
    NotConvertibleError,
    convert,
    label_expression,
)
from bundler.errors import InvalidInputError

_TEMPLATE = "${"
_UNCONVERTED = object()


class FleetValues:
    """The values conversion of one fleet.yaml (`fleet`), with the values files it names read
    (by the name written); every method adds its notes to `notes`."""

    def __init__(self, fleet: Located, values_files: Mapping[str, Located], notes: Notes) -> None:
        self.fleet = fleet
        self.values_files = values_files
        self.notes = notes

    def values(self, path: str, raw: Mapping[str, Any], *, templating: bool) -> dict[str, Any]:
        """`values`, the valuesFiles merged over them in order, then `templateValues`."""
        values = raw.get("values") or {}
        if not isinstance(values, Mapping):
            raise InvalidInputError("must be a mapping", obj=self.fleet.at(f"{path}.values"))
        merged: dict[str, Any] = self._converted(values, self.fleet, f"{path}.values", templating)
        for index, name in enumerate(raw.get("valuesFiles") or []):
            located = self.values_files.get(str(name))
            if located is None:
                raise InvalidInputError(
                    f"no values file {name}", obj=self.fleet.at(f"{path}.valuesFiles[{index}]")
                )
            content = located.body or {}
            if not isinstance(content, Mapping):
                raise InvalidInputError("must be a mapping of values", obj=located.at(None))
            merged = deep_merge(merged, self._converted(content, located, "", templating))
        for key, text in (raw.get("templateValues") or {}).items():
            where = f"{path}.templateValues.{key}"
            converted = self._template_value(where, str(text), templating)
            if converted is not _UNCONVERTED:
                merged[str(key)] = converted
        return merged

    def _template_value(self, where: str, text: str, templating: bool) -> Any:
        if _TEMPLATE not in text:
            return yamlload.load(text, self.fleet.at(where))  # Fleet reads the text as YAML
        if not templating:
            self.notes.dropped(
                self.fleet, where, "disablePreProcess leaves it unrendered in Fleet too"
            )
            return _UNCONVERTED
        try:
            written = convert(text)
        except NotConvertibleError as err:
            self.notes.dropped(self.fleet, where, f"{err}; rewrite it as a value of helm.values")
            return _UNCONVERTED
        if (
            written.startswith(_TEMPLATE)
            and written.count(_TEMPLATE) == 1
            and written.endswith("}")
        ):
            return written
        if any(mark in text for mark in ("\n", ": ", "- ")) or text.lstrip()[:1] in "[{":
            self.notes.dropped(
                self.fleet,
                where,
                "it renders YAML structure around the template, which bundler's templates never "
                "do; rewrite it as a value of helm.values",
            )
            return _UNCONVERTED
        return written

    def _converted(self, tree: Any, located: Located, path: str, templating: bool) -> Any:
        """`tree` with Fleet's templates and label substitutions written as bundler's."""
        if isinstance(tree, Mapping):
            out: dict[str, Any] = {}
            for key, value in tree.items():
                child = f"{path}.{key}" if path else str(key)
                new_key = self._string(str(key), located, child, templating, key=True)
                out[str(new_key)] = self._converted(value, located, child, templating)
            return out
        if isinstance(tree, list):
            return [
                self._converted(item, located, f"{path}[{i}]", templating)
                for i, item in enumerate(tree)
            ]
        if isinstance(tree, str):
            return self._string(tree, located, path, templating, key=False)
        return copy.deepcopy(tree)

    def _string(
        self, text: str, located: Located, path: str, templating: bool, *, key: bool
    ) -> str:
        if not key and text.startswith(FLEET_LABEL_PREFIX) and len(text) > len(FLEET_LABEL_PREFIX):
            if templating:
                return label_expression(text[len(FLEET_LABEL_PREFIX) :])
            self.notes.dropped(
                located,
                path,
                "Fleet's label substitution, which bundler does only as a template, and "
                "disablePreProcess turns templating off: the value stays this text",
            )
            return text
        if _TEMPLATE not in text or not templating:
            return text
        try:
            return convert(text)
        except NotConvertibleError as err:
            self.notes.dropped(
                located,
                path,
                f"Fleet template not converted ({err}): kept as written, it fails to render "
                "until rewritten as bundler's template",
            )
            return text

    def values_from(self, path: str, raw: Any, *, has_values: bool) -> list[dict[str, Any]]:
        found = []
        for index, entry in enumerate(raw or []):
            where = f"{path}.valuesFrom[{index}]"
            if not isinstance(entry, Mapping):
                raise InvalidInputError("must be a mapping", obj=self.fleet.at(where))
            kind = "ConfigMap" if entry.get("configMapKeyRef") else "Secret"
            ref = entry.get("configMapKeyRef") or entry.get("secretKeyRef") or {}
            if not ref.get("name"):
                raise InvalidInputError(
                    "needs configMapKeyRef or secretKeyRef with a name", obj=self.fleet.at(where)
                )
            converted = {"kind": kind, "name": ref["name"]}
            if ref.get("key"):
                converted["valuesKey"] = ref["key"]
            found.append(converted)
            namespace = ref.get("namespace") or "the release namespace"
            self.notes.note(
                self.fleet,
                where,
                f"Fleet read {kind} {ref['name']} in {namespace} on each cluster; bundler's Flux "
                "reads it in the agent's namespace (bundler-system): create it there",
            )
        if found and has_values:
            self.notes.note(
                self.fleet,
                f"{path}.valuesFrom",
                "precedence differs: Fleet merges valuesFrom over values, bundler (Flux) merges "
                "values over valuesFrom, so a key set in both now takes the inline value",
            )
        return found
