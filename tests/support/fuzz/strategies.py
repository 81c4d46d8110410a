"""What the fuzzing harness feeds bundler: YAML texts built from the corpus and mutated, documents
of bundler's kinds with hostile fields, label selectors, and (for the template section) values
trees and template strings.

The hook for template fuzzing: `values_trees()` and `template_strings()` draw what a Bundle's
`spec.helm.values` may hold, `${ ... }` expressions included. A test of the template path goes in
`tests/fuzz/test_templates.py`, decorated `@given(...)` with these (the settings profile of
tests/fuzz/conftest.py bounds it in `make test` and scales it under `make fuzz`); its property is
that rendering answers or raises a BundlerError (TemplateError, InvalidInputError), never anything
else, within the documented template limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

CORPUS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus"
API_VERSION = "bundler.dev/v1alpha1"
KINDS = ["Bundle", "Cluster", "ClusterGroup", "BootstrapConfig", "Secret", "Namespace", "Pod"]


def corpus_texts() -> list[tuple[str, str]]:
    """(file name, text) of every corpus input, in name order."""
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(CORPUS.glob("*.yaml"))]


# Text that YAML and bundler treat specially: indicators, anchors, tags, numbers past 64 bits,
# control and wide characters.
_TOKENS = [
    "---\n", "...\n", ": ", "- ", "{", "}", "[", "]", ",", "&a ", "*a", "<<: *a\n", "!!binary ",
    "!!python/object:os.system ", "!!set ", "? ", "|\n  ", ">\n  ", "'", '"', "#", "\t", "\n",
    "  ", "%YAML 1.1\n", "9" * 25, "-0x1", "1e400", ".nan", "2026-01-01", "~", "null", "yes",
    "\x00", "\x1b", "\u2028", "\ufeff", "é", "${ cluster.name }", "kind: ", "apiVersion: ",
    "metadata: ", "spec: ", "name: ", "namespace: ", "labels: ", "targets: ", "helm: ",
    "clusterSelector: ", "matchExpressions: ", "operator: ", "values: ", "secretRef: ",
]  # fmt: skip

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["", "Bundle", API_VERSION, "ws", "a" * 300, "In", "Exists", "10%", "5m"]),
)


def yaml_values(max_leaves: int = 25) -> st.SearchStrategy[Any]:
    """Trees of what YAML loads: mappings, lists and scalars, keys of any scalar type."""
    keys = st.one_of(st.text(max_size=20), st.integers(), st.booleans(), st.none())
    return st.recursive(
        _scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=5)
        ),
        max_leaves=max_leaves,
    )


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    """A document shaped like one of bundler's inputs, any field of it possibly hostile."""
    body: dict[str, Any] = {
        "apiVersion": draw(st.sampled_from([API_VERSION, "v1", "cluster.x-k8s.io/v1beta1"])),
        "kind": draw(st.one_of(st.sampled_from(KINDS), yaml_values(4))),
        "metadata": draw(
            st.one_of(
                st.fixed_dictionaries(
                    {"name": st.one_of(st.text(max_size=70), yaml_values(3))},
                    optional={
                        "namespace": st.text(max_size=70),
                        "labels": st.dictionaries(st.text(max_size=70), yaml_values(2), max_size=4),
                    },
                ),
                yaml_values(4),
            )
        ),
    }
    if draw(st.booleans()):
        body["spec"] = draw(yaml_values())
    return body


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    """A corpus text, a dumped document, or random tokens, then cut, spliced and mutated."""
    corpus = [text for _, text in corpus_texts()]
    text = draw(
        st.one_of(
            st.sampled_from(corpus),
            documents().map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
            st.lists(st.sampled_from(_TOKENS), max_size=30).map("".join),
        )
    )
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        action = draw(st.sampled_from(["insert", "delete", "cut", "dup"]))
        if action == "insert":
            text = text[:at] + draw(st.sampled_from(_TOKENS) | st.text(max_size=5)) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(min_value=1, max_value=8)) :]
        elif action == "cut":
            text = text[:at]
        else:
            text = text[:at] + text[at:] + text[at:]
    return text


_LABEL_TEXT = st.one_of(
    st.text(max_size=70),
    st.from_regex(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[a-zA-Z0-9]([-_.a-zA-Z0-9]*[a-zA-Z0-9])?)?",
                  fullmatch=True),
)  # fmt: skip


def labels() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(_LABEL_TEXT, _LABEL_TEXT, max_size=5)


def selectors() -> st.SearchStrategy[dict[str, Any]]:
    """Label selectors as a Bundle writes them, operators and values of any kind."""
    requirement = st.fixed_dictionaries(
        {
            "key": _LABEL_TEXT,
            "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
        },
        optional={"values": st.lists(_LABEL_TEXT, max_size=4)},
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "matchLabels": labels(),
            "matchExpressions": st.lists(requirement, max_size=4),
        },
    )


def values_trees() -> st.SearchStrategy[Any]:
    """For the template section: values trees whose strings may hold template expressions."""
    return st.recursive(
        st.one_of(_scalars, template_strings()),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(template_strings(), inner, max_size=4)
        ),
        max_leaves=20,
    )


_TEMPLATE_PARTS = [
    "${", "}", "${ cluster.name }", "${ cluster.labels.env }", "${ cluster.values }",
    "${% for x in range(3) %}", "${% endfor %}", "${# c #}", "$${", "{{ .Values.x }}", "|",
    " default('x') ", "[0:]", ".items", "'a' * 9", "~", "(", ")", "range(10**6)", "x",
]  # fmt: skip


def template_strings() -> st.SearchStrategy[str]:
    """For the template section: strings mixing `${ ... }` pieces with text."""
    return st.lists(st.sampled_from(_TEMPLATE_PARTS) | st.text(max_size=6), max_size=8).map("".join)


_FLEET_TEMPLATES = [
    "${ .ClusterLabels.env }", "${ index .ClusterLabels \"a/b\" }",
    "${ default \"x\" .ClusterValues.a }",
    "${ .ClusterName | quote }", "${ toJson .ClusterValues.l }", "${ if .X }", "${ end }", "${",
    "global.fleet.clusterLabels.env", "}", "\"", "`", "$", "${ $x := 1 }", "(", ")", "|",
]  # fmt: skip
_FLEET_KEYS = [
    "helm", "targetCustomizations", "targets", "overrideTargets", "diff", "correctDrift",
    "namespace", "defaultNamespace", "name", "labels", "dependsOn", "rolloutStrategy", "paused",
    "kustomize", "targetCustomizationMode",
]  # fmt: skip
_HELM_KEYS = [
    "chart", "repo", "version", "values", "valuesFiles", "valuesFrom", "templateValues", "force",
    "atomic", "takeOwnership", "timeoutSeconds", "disablePreProcess", "releaseName",
]  # fmt: skip


def fleet_strings() -> st.SearchStrategy[str]:
    """Strings of a fleet.yaml's values: Fleet's Go templates, whole, cut or mixed with text."""
    return st.lists(st.sampled_from(_FLEET_TEMPLATES) | st.text(max_size=6), max_size=5).map(
        "".join
    )


@st.composite
def fleet_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A fleet.yaml whose fields are Fleet's, each of any shape: the right one or a hostile one."""
    anything = st.one_of(yaml_values(6), fleet_strings())
    helm = draw(
        st.one_of(
            st.dictionaries(
                st.sampled_from(_HELM_KEYS),
                st.one_of(anything, st.dictionaries(fleet_strings(), anything, max_size=4)),
                max_size=6,
            ),
            anything,
        )
    )
    body: dict[str, Any] = draw(st.dictionaries(st.sampled_from(_FLEET_KEYS), anything, max_size=5))
    body["helm"] = helm
    if draw(st.booleans()):
        body["targetCustomizations"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"name": st.text(max_size=8)},
                    optional={
                        "clusterSelector": st.one_of(selectors(), anything),
                        "clusterGroup": anything,
                        "helm": st.one_of(st.fixed_dictionaries({"values": anything}), anything),
                        "doNotDeploy": anything,
                    },
                ),
                max_size=3,
            )
        )
    return body
