"""The one truncation rule for text bundler copies from someone else into a status.

Agents, Flux and registries write messages of any length; a status that copies them unbounded
grows past what the API server stores (etcd refuses objects over 1.5 MiB) and that roll-up stops
being written. So every such message is cut to a byte budget (Kubernetes' 32 KiB for a condition
message) before it is written: on a UTF-8 character boundary, ending with a visible marker, and
stable (cutting a cut text again changes nothing, so an unchanged world writes nothing). Pure.
"""

from __future__ import annotations

import codecs

from bundler.api.meta import CONDITION_MESSAGE_MAX

TRUNCATED_MARKER = " ... (truncated)"

# Lone surrogates can come from JSON ("\ud800"); they count as the three bytes they encode to.
_ERRORS = "surrogatepass"
_MARKER_BYTES = len(TRUNCATED_MARKER.encode("utf-8"))
# A code point is at most 4 bytes of UTF-8: texts this short fit without encoding them.
_MAX_CHAR_BYTES = 4


def truncated(text: str, max_bytes: int = CONDITION_MESSAGE_MAX) -> str:
    """`text` if its UTF-8 takes at most `max_bytes`, else its longest prefix of whole characters
    that fits together with TRUNCATED_MARKER, followed by the marker."""
    if max_bytes < _MARKER_BYTES:
        raise ValueError(f"a limit of {max_bytes} bytes leaves no room for the truncation marker")
    if len(text) * _MAX_CHAR_BYTES <= max_bytes:
        return text
    encoded = text.encode("utf-8", _ERRORS)
    if len(encoded) <= max_bytes:
        return text
    # The incremental decoder keeps back a character cut in half instead of failing on it.
    decoder = codecs.getincrementaldecoder("utf-8")(_ERRORS)
    head = decoder.decode(encoded[: max_bytes - _MARKER_BYTES], final=False)
    return head + TRUNCATED_MARKER
