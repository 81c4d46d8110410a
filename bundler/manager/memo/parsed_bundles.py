"""Each Bundle's parsed and validated model, kept while what it was parsed from stays.

A Bundle pass runs for every change of any cluster of its workspace; parsing and validating a
Bundle of large values each time cost as much as the rest of a one-cluster pass. A status write
changes the object the informer holds but not the model: the model is kept per Bundle with its
uid, generation (the API server raises it on every spec change), labels, annotations, finalizers
and deletion, and parsed again when one of those differs. A Bundle that does not parse is not
kept: it is rejected again at each pass.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from typing import Any

from bundler.api.bundle import Bundle
from bundler.core.validation import bundle_of, validate_bundle
from bundler.manager.observed.indexes import labels_fingerprint


class ParsedBundles:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[Hashable, Bundle]] = {}

    def of(self, bundle_ref: str, observed: Mapping[str, Any]) -> Bundle:
        """The Bundle `observed` is, validated; InvalidInputError naming the field otherwise."""
        ident = _parsed_from(observed)
        with self._lock:
            kept = self._kept.get(bundle_ref)
        if kept is not None and kept[0] == ident:
            return kept[1]
        bundle = bundle_of(observed)
        validate_bundle(bundle)
        with self._lock:
            self._kept[bundle_ref] = (ident, bundle)
        return bundle

    def forget(self, bundle_ref: str) -> None:
        with self._lock:
            self._kept.pop(bundle_ref, None)


def _parsed_from(observed: Mapping[str, Any]) -> Hashable:
    meta = observed.get("metadata") or {}
    return (
        meta.get("uid"),
        meta.get("generation"),
        meta.get("name"),
        meta.get("namespace"),
        labels_fingerprint(meta.get("labels") or {}),
        labels_fingerprint(meta.get("annotations") or {}),
        tuple(meta.get("finalizers") or ()),
        meta.get("deletionTimestamp"),
    )
