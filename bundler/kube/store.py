"""KubeStore: the Store protocol over a real Kubernetes API server, with the official client.

Objects are plain dicts on the wire and in memory; writes are POST, PUT with resourceVersion,
JSON merge patch and DELETE on paths built from the Resource. Each watch runs in its own thread
(bundler.kube.watch), which is fine for the real backend: one process talks to one API server.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from kubernetes.client import ApiClient

from bundler.api.resources import Resource, Verb
from bundler.kube.client import (
    client_from_kubeconfig,
    client_from_kubeconfig_dict,
    client_from_kubeconfig_text,
    default_client,
)
from bundler.kube.metrics import RequestMetrics
from bundler.kube.paths import (
    collection_path,
    describe,
    group_version_path,
    label_selector,
    object_path,
)
from bundler.kube.ratelimit import TokenBucket
from bundler.kube.retry import RetryPolicy
from bundler.kube.transport import JSON, MERGE_PATCH, Method, Query, Timeouts, Transport
from bundler.kube.watch import StreamWatch, WatchRequest
from bundler.store.errors import Gone, Invalid, KindNotServed, NotFound
from bundler.store.protocol import ErrorHandler, EventHandler, Obj, ObjectList, Watch

# client-go's pager reads lists in pages of 500 objects.
DEFAULT_PAGE_SIZE = 500


@dataclass(frozen=True)
class KubeOptions:
    """How hard a KubeStore tries: retries, per-request timeouts, and how long one watch request
    lasts on the server before the store reconnects (client-go picks 5 to 10 minutes); how fast it
    may send (`limiter`, none: unlimited) and where it counts its requests (`metrics`); lists are
    read in pages of `page_size` objects (0: one response), as client-go's pager reads them."""

    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeouts: Timeouts = field(default_factory=Timeouts)
    watch_timeout_seconds: int = 300
    page_size: int = DEFAULT_PAGE_SIZE
    limiter: TokenBucket | None = None
    metrics: RequestMetrics | None = None


class KubeStore:
    """A Store backed by one API server. Close it (or use it as a context manager) when done;
    closing stops its watches."""

    def __init__(self, api: ApiClient, options: KubeOptions | None = None) -> None:
        options = options or KubeOptions()
        self._transport = Transport(
            api,
            options.retry,
            options.timeouts,
            limiter=options.limiter,
            metrics=options.metrics,
        )
        self._watch_timeout_seconds = options.watch_timeout_seconds
        if options.page_size < 0:
            raise ValueError(f"page_size must be 0 (no paging) or more, not {options.page_size}")
        self._page_size = options.page_size
        # Running watch threads keep their StreamWatch alive; finished ones drop out by themselves.
        self._watches: weakref.WeakSet[StreamWatch] = weakref.WeakSet()

    @classmethod
    def from_kubeconfig(
        cls, path: str | Path, context: str | None = None, options: KubeOptions | None = None
    ) -> KubeStore:
        return cls(client_from_kubeconfig(path, context), options)

    @classmethod
    def from_kubeconfig_dict(
        cls,
        kubeconfig: Mapping[str, Any],
        context: str | None = None,
        options: KubeOptions | None = None,
    ) -> KubeStore:
        """A store for a parsed kubeconfig, e.g. a Cluster API `<cluster>-kubeconfig` Secret."""
        return cls(client_from_kubeconfig_dict(kubeconfig, context), options)

    @classmethod
    def from_kubeconfig_text(
        cls,
        text: str | bytes,
        context: str | None = None,
        options: KubeOptions | None = None,
        *,
        source: str = "kubeconfig",
    ) -> KubeStore:
        """A store for kubeconfig YAML, e.g. the decoded `value` of a kubeconfig Secret; errors
        name `source` (say, the Secret) and never quote the text."""
        return cls(client_from_kubeconfig_text(text, context, source=source), options)

    def close(self) -> None:
        for watch in list(self._watches):
            watch.stop()
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        target = describe(res, name, namespace)
        return self._call(Method.GET, Verb.GET, object_path(res, name, namespace), target)

    def list(
        self,
        res: Resource,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> ObjectList:
        """Every object, read in pages of `page_size` as client-go's pager reads: each page asks
        for the rest with the previous page's `continue` token. A token that expired meanwhile
        (410) makes the list start again as one full, unpaged list, as client-go's does."""
        selector = label_selector(labels)
        query = [("labelSelector", selector)] if selector else []
        path, target = collection_path(res, namespace), describe(res, None, namespace)
        items: list[Obj] = []
        page = self._page(path, target, query, self._page_size, "")
        items.extend(page.get("items") or [])
        while token := str((page.get("metadata") or {}).get("continue") or ""):
            try:
                page = self._page(path, target, query, self._page_size, token)
            except Gone:
                page = self._page(path, target, query, 0, "")
                items = []
            items.extend(page.get("items") or [])
        # Real servers leave apiVersion and kind off the items of built-in kinds' lists.
        envelope = {"apiVersion": res.api_version, "kind": res.kind}
        return ObjectList(
            [{**envelope, **item} for item in items],
            str((page.get("metadata") or {}).get("resourceVersion", "")),
        )

    def _page(self, path: str, target: str, query: Query, limit: int, token: str) -> Obj:
        paging = [("limit", str(limit))] if limit else []
        if token:
            paging.append(("continue", token))
        return self._call(Method.GET, Verb.LIST, path, target, query=[*query, *paging])

    def create(self, res: Resource, obj: Obj) -> Obj:
        namespace, name = _namespace_and_name(obj)
        target = describe(res, name or _generate_name(obj), namespace)
        if res.namespaced and not namespace:
            raise Invalid("metadata.namespace is required for a namespaced kind", obj=target)
        return self._call(
            Method.POST,
            Verb.CREATE,
            collection_path(res, namespace),
            target,
            query=_write_query(res),
            body=obj,
        )

    def update(self, res: Resource, obj: Obj) -> Obj:
        return self._replace(res, obj, status=False)

    def update_status(self, res: Resource, obj: Obj) -> Obj:
        """PUT to the status subresource; a kind without one has status as an ordinary field, so
        the whole object is written, as against a real server."""
        return self._replace(res, obj, status=True)

    def patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        return self._merge_patch(res, name, patch, namespace, status=False)

    def patch_status(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        return self._merge_patch(res, name, patch, namespace, status=True)

    def delete(self, res: Resource, name: str, namespace: str | None = None) -> None:
        self._call(
            Method.DELETE,
            Verb.DELETE,
            object_path(res, name, namespace),
            describe(res, name, namespace),
        )

    def watch(
        self,
        res: Resource,
        on_event: EventHandler,
        *,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
        resource_version: str | None = None,
        on_error: ErrorHandler | None = None,
    ) -> Watch:
        """Events after `resource_version`, or after this call returns when it is None."""
        path = collection_path(res, namespace)
        target = describe(res, None, namespace)
        start = resource_version or self._current_resource_version(path, target)
        request = WatchRequest(path, label_selector(labels), target, self._watch_timeout_seconds)
        watch = StreamWatch(self._transport, request, start, on_event, on_error)
        self._watches.add(watch)
        watch.start()
        return watch

    def served(self, res: Resource) -> bool:
        """Whether the server serves the kind (discovery), e.g. False when Flux is not installed."""
        try:
            document = self._call(
                Method.GET, Verb.GET, group_version_path(res), f"discovery of {res}"
            )
        except (KindNotServed, NotFound):
            return False
        return any(r.get("name") == res.plural for r in document.get("resources") or [])

    def _replace(self, res: Resource, obj: Obj, *, status: bool) -> Obj:
        namespace, name = _namespace_and_name(obj)
        target = describe(res, name, namespace)
        if not name:
            raise Invalid("metadata.name is required", obj=target)
        return self._call(
            Method.PUT,
            Verb.UPDATE,
            object_path(res, name, namespace, status=status),
            target,
            query=_write_query(res),
            body=obj,
        )

    def _merge_patch(
        self,
        res: Resource,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None,
        *,
        status: bool,
    ) -> Obj:
        return self._call(
            Method.PATCH,
            Verb.PATCH,
            object_path(res, name, namespace, status=status),
            describe(res, name, namespace),
            query=_write_query(res),
            body=dict(patch),
            content_type=MERGE_PATCH,
        )

    def _current_resource_version(self, path: str, target: str) -> str:
        # The smallest list there is: its resourceVersion is "now" for the watch to start from.
        answer = self._call(Method.GET, Verb.LIST, path, target, query=[("limit", "1")])
        return str(answer["metadata"]["resourceVersion"])

    def _call(
        self,
        method: Method,
        verb: Verb,
        path: str,
        target: str,
        *,
        query: Query = (),
        body: Any = None,
        content_type: str = JSON,
    ) -> Obj:
        return self._transport.call(
            method,
            path,
            verb=verb,
            target=target,
            query=query,
            body=body,
            content_type=content_type,
        )


def load_store(
    kubeconfig: str | None = None, context: str | None = None, options: KubeOptions | None = None
) -> KubeStore:
    """A store for the given kubeconfig, else $KUBECONFIG, else the in-cluster service account."""
    return KubeStore(default_client(kubeconfig, context), options)


def _write_query(res: Resource) -> Query:
    """`fieldValidation=Strict` for kinds that ask for it (the server's default is Warn: unknown
    fields dropped, with a warning nobody reads)."""
    return (("fieldValidation", "Strict"),) if res.strict_fields else ()


def _namespace_and_name(obj: Obj) -> tuple[str | None, str | None]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace"), meta.get("name")


def _generate_name(obj: Obj) -> str | None:
    prefix = (obj.get("metadata") or {}).get("generateName")
    return f"{prefix}*" if prefix else None
