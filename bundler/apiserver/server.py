"""`ApiServer`: a Kubernetes API server for tests, over real HTTP on 127.0.0.1, backed by a store.

It speaks the REST paths, discovery, watch streams and Status errors that the official `kubernetes`
client uses, counts requests by verb, can fail chosen requests on purpose (409/410/429/5xx with
Retry-After) and can stop serving a kind, as a cluster without the Flux CRDs would. Like a real
cluster, it fills service-account token Secrets (bundler.apiserver.tokens), authenticates every
request by its bearer token (bundler.apiserver.authn: `admin_token`, or a service-account token),
enforces RBAC (bundler.apiserver.rbac, .escalation) and etcd's and the API's limits
(bundler.apiserver.limits), and decodes and validates custom resources against their CRD schemas
(bundler.apiserver.admission: field validation, pruning, defaulting, schema validation). For
kubectl it answers Tables (bundler.apiserver.tables) and OpenAPI v3 documents with the bundler
kinds' schemas (bundler.apiserver.openapi), and speaks HTTPS given a `certificate` (cert and key
files). Where it answers otherwise than kube-apiserver on purpose: docs/apiserver-differences.md.
"""

from __future__ import annotations

import base64
import ssl
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import yaml

from bundler.api.resources import ALL_KINDS, Resource, Verb
from bundler.apiserver.authn import DEFAULT_ADMIN_TOKEN
from bundler.apiserver.context import ServerContext, Write
from bundler.apiserver.faults import Fault
from bundler.apiserver.httpd import KubeHTTPServer
from bundler.apiserver.paging import DEFAULT_TTL
from bundler.apiserver.tokens import TEST_CA_PEM
from bundler.store.memory import MemoryStore

_CONTEXT_NAME = "bundler-test"


class ApiServer:
    """Start with `with ApiServer() as server:` (or start()/stop()); `url` is set once started.

    The default store requires Namespaces to exist, like a real cluster. `bookmark_interval` is
    how often watches that allow bookmarks get one while idle (one is always sent at timeout).
    Discovery requests are counted under "discovery", not "get". With `token_controller` (the
    default) token Secrets of existing ServiceAccounts stored in `store` get a token while the
    server runs, as Kubernetes' token controller gives them, with the server's certificate as
    their `ca.crt` when it has one; its writes are not counted. `admin_token` (default a
    fixed one, or `token`) authenticates as a member of `system:masters`, who may do anything:
    the fixtures' cluster admin; `kubeconfig()` uses it unless told another token. A list's
    continue token expires `continue_ttl` seconds after its first page (0: at once).
    """

    def __init__(
        self,
        store: MemoryStore | None = None,
        resources: Iterable[Resource] = ALL_KINDS,
        *,
        token: str | None = None,
        bookmark_interval: float = 30.0,
        token_controller: bool = True,
        certificate: tuple[Path, Path] | None = None,
        port: int = 0,
        continue_ttl: float = DEFAULT_TTL,
    ) -> None:
        self.store = store if store is not None else MemoryStore(require_namespaces=True)
        self.url = ""
        self.admin_token = token if token is not None else DEFAULT_ADMIN_TOKEN
        self._context = ServerContext(
            self.store,
            resources,
            admin_token=self.admin_token,
            bookmark_interval=bookmark_interval,
            token_controller=token_controller,
            ca_pem=certificate[0].read_text() if certificate is not None else TEST_CA_PEM,
            continue_ttl=continue_ttl,
        )
        self._certificate = certificate
        self._port = port
        self._httpd: KubeHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ApiServer:
        if self._httpd is not None:
            raise RuntimeError(f"the test API server at {self.url} is already running")
        tls = None
        if self._certificate is not None:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.load_cert_chain(*self._certificate)
        self._httpd = KubeHTTPServer(self._context, tls, self._port)
        self._context.start()
        host, port = self._httpd.server_address[:2]
        scheme = "http" if tls is None else "https"
        self.url = f"{scheme}://{host!s}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"apiserver-{port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, end open watch streams and connections, join every thread."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        self._context.stop_streams()
        httpd.shutdown()
        thread.join()
        httpd.close_connections()
        httpd.server_close()
        self._context.stop()
        self._httpd = self._thread = None

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def open_connections(self) -> int:
        """Client connections whose handlers have not finished yet (0 when stopped)."""
        return self._httpd.open_connections() if self._httpd is not None else 0

    def request_counts(self) -> Counter[str]:
        """Requests so far by Kubernetes verb (get, list, watch, create, update, patch, delete)."""
        return self._context.counts()

    def reset_counts(self) -> None:
        self._context.reset_counts()

    def denials(self, user: str | None = None) -> list[str]:
        """The messages of every 403 answered so far (only those naming `user`, if given)."""
        found = self._context.denials()
        return found if user is None else [m for m in found if f'"{user}"' in m]

    def inject_failure(
        self,
        code: int,
        *,
        verb: Verb | None = None,
        resource: Resource | None = None,
        retry_after: int | None = None,
        count: int = 1,
    ) -> None:
        """Answer the next `count` requests matching `verb` and `resource` with `code`."""
        self._context.faults.add(Fault(code, verb, resource, retry_after, count))

    def writes(self, user: str | None = None) -> list[Write]:
        """The successful writes so far (of `user` only, when given), oldest first."""
        found = self._context.writes()
        return found if user is None else [w for w in found if w.user == user]

    def expire_continue_tokens(self) -> None:
        """Make every outstanding list continue token answer 410 Expired, as etcd's compaction
        does on a real server."""
        self._context.pager.expire_all()

    def clear_failures(self) -> None:
        self._context.faults.clear()

    def remove_resource(self, res: Resource) -> None:
        """Stop serving a kind: 404 on its paths and absent from discovery. Its objects stay."""
        self._context.unserve(res)

    def add_resource(self, res: Resource) -> None:
        self._context.serve(res)

    def served_resources(self) -> list[Resource]:
        return self._context.served()

    def kubeconfig(
        self, path: Path, *, token: str | None = None, namespace: str = "default"
    ) -> Path:
        """Write a kubeconfig for this server and return its path (mode 0600: it holds a token).

        `token` defaults to the admin token (`admin_token`). With a `certificate`, the server
        speaks HTTPS and the kubeconfig trusts that certificate; kubectl sends a token only over
        HTTPS.
        """
        if not self.url:
            raise RuntimeError("start the test API server before writing a kubeconfig for it")
        bearer = token if token is not None else self.admin_token
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": _CONTEXT_NAME, "cluster": self._cluster_entry()}],
            "users": [{"name": _CONTEXT_NAME, "user": {"token": bearer} if bearer else {}}],
            "contexts": [
                {
                    "name": _CONTEXT_NAME,
                    "context": {
                        "cluster": _CONTEXT_NAME,
                        "user": _CONTEXT_NAME,
                        "namespace": namespace,
                    },
                }
            ],
            "current-context": _CONTEXT_NAME,
        }
        path.touch(mode=0o600)
        path.chmod(0o600)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    def _cluster_entry(self) -> dict[str, str]:
        entry = {"server": self.url}
        if self._certificate is not None:
            authority = base64.b64encode(self._certificate[0].read_bytes()).decode()
            entry["certificate-authority-data"] = authority
        return entry
