"""Certificates and keys of one test cluster, made with the `openssl` command.

Each cluster has its own CA. kube-apiserver serves a certificate for 127.0.0.1 signed by it and
trusts client certificates it signed; the admin's is in group `system:masters`, as kubeadm's
admin.conf is. ServiceAccount tokens are signed with a key pair of their own, shared by the API
server (signing, verifying) and kube-controller-manager (token Secrets). EC keys: generated in
milliseconds.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
DAYS = "2"


def _openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.strip()}")


@dataclass(frozen=True)
class ClusterPki:
    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @property
    def serving_cert(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def serving_key(self) -> Path:
        return self.directory / "apiserver.key"

    @property
    def admin_cert(self) -> Path:
        return self.directory / "admin.crt"

    @property
    def admin_key(self) -> Path:
        return self.directory / "admin.key"

    @property
    def service_account_key(self) -> Path:
        return self.directory / "sa.key"

    @property
    def service_account_pub(self) -> Path:
        return self.directory / "sa.pub"


def make_cluster_pki(directory: Path, cluster: str) -> ClusterPki:
    directory.mkdir(parents=True, exist_ok=True)
    pki = ClusterPki(directory)
    _openssl(
        "req", "-x509", *_EC, "-days", DAYS, "-subj", f"/CN={cluster}-ca",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", str(pki.ca_key), "-out", str(pki.ca_cert),
    )  # fmt: skip
    _signed(pki, pki.serving_cert, pki.serving_key, "/CN=kube-apiserver",
            "subjectAltName=IP:127.0.0.1,DNS:localhost", "extendedKeyUsage=serverAuth")  # fmt: skip
    _signed(pki, pki.admin_cert, pki.admin_key, "/O=system:masters/CN=e2e-admin",
            None, "extendedKeyUsage=clientAuth")  # fmt: skip
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout",
             "-out", str(pki.service_account_key))  # fmt: skip
    _openssl("ec", "-in", str(pki.service_account_key), "-pubout",
             "-out", str(pki.service_account_pub))  # fmt: skip
    return pki


def _signed(
    pki: ClusterPki, cert: Path, key: Path, subject: str, san: str | None, usage: str
) -> None:
    request = cert.with_suffix(".csr")
    extra = ["-addext", san] if san else []
    _openssl("req", "-new", *_EC, "-subj", subject, *extra, "-addext", usage,
             "-keyout", str(key), "-out", str(request))  # fmt: skip
    _openssl("x509", "-req", "-in", str(request), "-CA", str(pki.ca_cert),
             "-CAkey", str(pki.ca_key), "-CAcreateserial", "-days", DAYS,
             "-copy_extensions", "copy", "-out", str(cert))  # fmt: skip
    request.unlink()
