"""Warning headers as kube-apiserver's recorder writes them: escaped, once each, and cut down when
there are too many."""

from __future__ import annotations

from bundler.apiserver.response_warnings import TRUNCATE_AT_TOTAL, TRUNCATE_ITEM, Warnings


def test_each_warning_is_a_299_header_once_escaped() -> None:
    warnings = Warnings()
    for text in (
        'unknown field "spec.a"',
        'unknown field "spec.a"',
        "back\\slash",
        "bad\x07bell",
        "",
    ):
        warnings.add(text)
    assert warnings.headers() == ['299 - "unknown field \\"spec.a\\""', '299 - "back\\\\slash"']


def test_past_the_total_every_warning_is_cut_and_the_rest_left_out() -> None:
    warnings = Warnings()
    texts = [f"{i:03d}" + "x" * 1000 for i in range(40)]
    for text in texts:
        warnings.add(text)
    headers = warnings.headers()
    assert headers, "some warnings are kept"
    kept = [h.removeprefix('299 - "').removesuffix('"') for h in headers]
    assert all(len(k) == TRUNCATE_ITEM for k in kept)
    assert kept == [t[:TRUNCATE_ITEM] for t in texts[: len(kept)]]
    assert TRUNCATE_AT_TOTAL <= sum(map(len, kept)) < TRUNCATE_AT_TOTAL + TRUNCATE_ITEM
