"""GET over HTTP for tests of the endpoints: the status and body, error statuses included."""

from __future__ import annotations

import urllib.error
import urllib.request

# Upper bound (real seconds) on one request; tests never assert on durations.
WAIT = 10.0


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=WAIT) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
