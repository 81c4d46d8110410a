"""A self-signed certificate for the API server on 127.0.0.1, made with the `openssl` command.

kubectl sends a bearer token only over HTTPS, so a server kubectl talks to needs one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bundler.errors import BundlerError

# EC keys are generated in milliseconds; RSA keys take seconds.
_OPENSSL_REQUEST = [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "30",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
]


def self_signed_certificate(directory: Path, name: str = "apiserver") -> tuple[Path, Path]:
    """Write `NAME.crt` and `NAME.key` for 127.0.0.1 into `directory`."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise BundlerError("the openssl command is needed to serve HTTPS (apt-get install openssl)")
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    command = [openssl, *_OPENSSL_REQUEST, "-keyout", str(key), "-out", str(cert)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        raise BundlerError(f"openssl could not make a certificate: {done.stderr.strip()[:200]}")
    return cert, key
