"""Cosign signatures of OCI artifacts in the test registry, written the way `cosign sign --key`
writes them (cosign's "simple signing" format, which source-controller verifies with a public key
and no transparency log), with the `openssl` command and the registry's HTTP API.

A signature of the manifest `sha256:<hex>` of repository R is an OCI image tagged
`sha256-<hex>.sig` in R: one layer, the JSON payload naming the digest
(`application/vnd.dev.cosign.simplesigning.v1+json`), whose annotation
`dev.cosignproject.cosign/signature` is the base64 ECDSA P-256 / SHA-256 signature of the payload.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
_TIMEOUT_S = 30


@dataclass(frozen=True)
class CosignKey:
    private_key: Path
    public_pem: str


def _openssl(*args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(["openssl", *args], input=stdin, capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.decode().strip()}")
    return done.stdout


def generate_key(directory: Path, name: str = "cosign") -> CosignKey:
    """An ECDSA P-256 key pair, as `cosign generate-key-pair` makes (unencrypted here)."""
    directory.mkdir(parents=True, exist_ok=True)
    private = directory / f"{name}.key"
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(private))
    public = _openssl("ec", "-in", str(private), "-pubout").decode()
    return CosignKey(private, public)


def sign(registry: str, repository: str, tag: str, key: CosignKey) -> str:
    """Sign the manifest `repository:tag` of the plain-HTTP registry at `registry` (host:port);
    returns the signed digest."""
    base = f"http://{registry}/v2/{repository}"
    digest = _manifest_digest(f"{base}/manifests/{tag}")
    payload = json.dumps(
        {
            "critical": {
                "identity": {"docker-reference": f"{registry}/{repository}"},
                "image": {"docker-manifest-digest": digest},
                "type": "cosign container image signature",
            },
            "optional": None,
        },
        separators=(",", ":"),
    ).encode()
    signature = _openssl("dgst", "-sha256", "-sign", str(key.private_key), stdin=payload)
    payload_digest = _push_blob(base, payload)
    config = json.dumps(
        {
            "architecture": "",
            "os": "",
            "config": {},
            "rootfs": {"type": "layers", "diff_ids": [payload_digest]},
        },
        separators=(",", ":"),
    ).encode()
    config_digest = _push_blob(base, config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "size": len(config), "digest": config_digest},
        "layers": [
            {
                "mediaType": SIMPLE_SIGNING,
                "size": len(payload),
                "digest": payload_digest,
                "annotations": {SIGNATURE_ANNOTATION: base64.b64encode(signature).decode()},
            }
        ],
    }
    signature_tag = digest.replace(":", "-") + ".sig"
    _request(
        "PUT",
        f"{base}/manifests/{signature_tag}",
        json.dumps(manifest).encode(),
        {"Content-Type": OCI_MANIFEST},
    )
    return digest


def _manifest_digest(url: str) -> str:
    return _request("HEAD", url, None, {"Accept": OCI_MANIFEST})["Docker-Content-Digest"]


def _push_blob(base: str, data: bytes) -> str:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    location = _request("POST", f"{base}/blobs/uploads/", b"", {})["Location"]
    if location.startswith("/"):
        location = base.split("/v2/", 1)[0] + location
    separator = "&" if "?" in location else "?"
    _request(
        "PUT",
        f"{location}{separator}digest={digest}",
        data,
        {"Content-Type": "application/octet-stream"},
    )
    return digest


def _request(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> dict[str, str]:
    """The answer's headers; urllib raises for an error status."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as answer:
        return {str(k): str(v) for k, v in answer.headers.items()}
