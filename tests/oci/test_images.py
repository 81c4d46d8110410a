"""Resolving Bundle images against real pushed images (docker-registry on 127.0.0.1), and
against a scripted registry for what that one does not do (tag list pages)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from bundler.api.images import BundleImage, ResolvedImage
from bundler.errors import InvalidInputError, RegistryAnswerError, TransientError
from bundler.oci.credentials import Credentials
from bundler.oci.images import ImageResolver, ImageResolverSettings
from tests.support.manager.registry_charts import docker_config_json
from tests.support.oci.hostile_server import HostileServer, Out, elsewhere, hostile, whole
from tests.support.registry_fixtures import LocalRegistry, closed_port
from tests.support.registry_images import push_image, push_index, push_tags, repository_path

__all__ = ["elsewhere", "hostile"]


def image(repository: str, policy: dict[str, Any], **fields: Any) -> BundleImage:
    return BundleImage.model_validate(
        {"name": "web", "repository": repository, "policy": policy, **fields}
    )


def semver(range_: str) -> dict[str, Any]:
    return {"semver": {"range": range_}}


def dockerconfig(host: str, username: str, password: str) -> dict[str, str]:
    """The decoded data of a kubernetes.io/dockerconfigjson Secret."""
    return {".dockerconfigjson": docker_config_json(host, username, password)}


@pytest.fixture
def repo(oci_registry: LocalRegistry, repo_path: str) -> str:
    """`HOST/t/<test name>`: a repository of the test's own in the plain registry."""
    return f"{oci_registry.host}/{repo_path}"


SEMVER_TAGS = ["1.0.0", "1.2.0", "v1.10.0", "2.0.0-rc.1", "latest", "sha-1a2b3c"]

POLICY_CASES: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    ("semver-release", semver("^1"), {}, "v1.10.0"),
    ("semver-prerelease-range", semver(">=2.0.0-0"), {}, "2.0.0-rc.1"),
    ("semver-prerelease-not-named", semver(">=1.5"), {}, "v1.10.0"),
    ("alphabetical-asc", {"alphabetical": {"order": "asc"}}, {}, "v1.10.0"),
    ("alphabetical-desc", {"alphabetical": {"order": "desc"}}, {}, "1.0.0"),
    (
        "ignore-tags",
        {"alphabetical": {"order": "asc"}},
        {"ignoreTags": ["v*", "sha-*", "latest"]},
        "2.0.0-rc.1",
    ),
    (
        "filter-extract",
        {"numerical": {"order": "asc"}},
        {"filterTags": {"pattern": r"^(?P<major>\d+)\.", "extract": "$major"}},
        "2.0.0-rc.1",
    ),
]


@pytest.mark.parametrize(
    ("policy", "fields", "expected"),
    [c[1:] for c in POLICY_CASES],
    ids=[c[0] for c in POLICY_CASES],
)
def test_policies_choose_a_pushed_tag_and_its_digest(
    oci_registry: LocalRegistry,
    repo: str,
    policy: dict[str, Any],
    fields: dict[str, Any],
    expected: str,
) -> None:
    pushed = {tag: push_image(oci_registry, repository_path(repo), tag) for tag in SEMVER_TAGS}
    resolved = ImageResolver().resolve(image(repo, policy, **fields), None)
    assert resolved == ResolvedImage(
        name="web", repository=repo, tag=expected, digest=pushed[expected].digest
    )


def test_numerical_builds(oci_registry: LocalRegistry, repo: str) -> None:
    pushed = push_tags(oci_registry, repository_path(repo), ["9", "10", "100", "build-7"])
    resolved = ImageResolver().resolve(image(repo, {"numerical": {"order": "asc"}}), None)
    assert (resolved.tag, resolved.digest) == ("100", pushed["100"].digest)


def test_no_matching_tag_names_image_repository_policy_and_count(
    oci_registry: LocalRegistry, repo: str
) -> None:
    push_tags(oci_registry, repository_path(repo), ["1.0.0", "1.1.0"])
    with pytest.raises(InvalidInputError) as caught:
        ImageResolver().resolve(image(repo, semver(">=2")), None)
    message = str(caught.value)
    assert "spec.images[web]" in message and repo in message
    assert "semver range '>=2'" in message and "2 tags seen" in message


def test_a_repository_that_does_not_exist(oci_registry: LocalRegistry) -> None:
    with pytest.raises(
        RegistryAnswerError, match=r"spec.images\[web\]: .*/t/nothing-here: not found"
    ):
        ImageResolver().resolve(image(f"{oci_registry.host}/t/nothing-here", semver("*")), None)


PLATFORM_CASES = [
    ("only-an-older-index-offers-it", "linux/s390x", "1.0.0"),
    ("any-variant-when-none-asked", "linux/arm64", "1.1.0"),
    ("variant-asked", "linux/arm64/v8", "1.1.0"),
    ("single-image-config", "linux/amd64", "1.2.0"),
]


@pytest.mark.parametrize(
    ("platform", "expected"), [c[1:] for c in PLATFORM_CASES], ids=[c[0] for c in PLATFORM_CASES]
)
def test_platform_filtering(
    oci_registry: LocalRegistry, repo: str, platform: str, expected: str
) -> None:
    path = repository_path(repo)
    pushed = {
        "1.0.0": push_index(oci_registry, path, "1.0.0", ("linux/amd64", "linux/s390x")),
        "1.1.0": push_index(oci_registry, path, "1.1.0", ("linux/amd64", "linux/arm64/v8")),
        "1.2.0": push_image(oci_registry, path, "1.2.0", "linux/amd64"),
    }
    resolved = ImageResolver().resolve(image(repo, semver("^1"), platform=platform), None)
    assert (resolved.tag, resolved.digest) == (expected, pushed[expected].digest)


def test_no_tag_offers_the_platform(oci_registry: LocalRegistry, repo: str) -> None:
    push_index(oci_registry, repository_path(repo), "1.0.0")
    push_image(oci_registry, repository_path(repo), "1.1.0", "linux/amd64")
    with pytest.raises(InvalidInputError) as caught:
        ImageResolver().resolve(image(repo, semver("^1"), platform="linux/arm/v7"), None)
    message = str(caught.value)
    assert "spec.images[web].platform" in message
    assert "none of the 2 best tags matching the policy (1.1.0, 1.0.0)" in message
    assert "linux/arm/v7" in message


def test_platform_tries_are_bounded(oci_registry: LocalRegistry, repo: str) -> None:
    push_index(oci_registry, repository_path(repo), "1.0.0")  # offers arm64, but is third best
    push_tags(oci_registry, repository_path(repo), ["1.1.0", "1.2.0"])  # amd64 only
    resolver = ImageResolver(ImageResolverSettings(platform_tries=2))
    with pytest.raises(InvalidInputError, match=r"none of the 2 best tags .*\(1.2.0, 1.1.0\)"):
        resolver.resolve(image(repo, semver("^1"), platform="linux/arm64"), None)
    assert ImageResolver().resolve(image(repo, semver("^1"), platform="linux/arm64"), None).tag == (
        "1.0.0"
    )


def test_a_page_size_a_registry_ignores_is_harmless(oci_registry: LocalRegistry, repo: str) -> None:
    # Debian's docker-registry (distribution 2.x) answers every tag on one page whatever `n` says.
    tags = [f"{n}" for n in range(1, 12)]
    pushed = push_tags(oci_registry, repository_path(repo), tags)
    resolver = ImageResolver(ImageResolverSettings(page_size=3))
    resolved = resolver.resolve(image(repo, {"numerical": {"order": "asc"}}), None)
    assert (resolved.tag, resolved.digest) == ("11", pushed["11"].digest)


def test_tag_count_is_bounded(oci_registry: LocalRegistry, repo: str) -> None:
    push_tags(oci_registry, repository_path(repo), ["a", "b", "c", "d"])
    resolver = ImageResolver(ImageResolverSettings(page_size=2, max_tags=3))
    with pytest.raises(RegistryAnswerError, match=r"spec.images\[web\]: .*more than 3 tags"):
        resolver.resolve(image(repo, {"alphabetical": {}}), None)


@pytest.fixture
def auth_repo(oci_registry_basic_auth: LocalRegistry, repo_path: str) -> str:
    return f"{oci_registry_basic_auth.host}/{repo_path}"


def test_credentials_from_the_secret(
    oci_registry_basic_auth: LocalRegistry, auth_repo: str
) -> None:
    reg = oci_registry_basic_auth
    assert reg.username is not None and reg.password is not None
    pushed = push_index(reg, repository_path(auth_repo), "2.0.0")
    secret = dockerconfig(reg.host, reg.username, reg.password)
    resolved = ImageResolver().resolve(
        image(auth_repo, semver("2"), platform="linux/arm64"), secret
    )
    assert (resolved.tag, resolved.digest) == ("2.0.0", pushed.digest)


def test_wrong_credentials_are_refused_without_the_password(
    oci_registry_basic_auth: LocalRegistry, auth_repo: str
) -> None:
    reg = oci_registry_basic_auth
    secret = dockerconfig(reg.host, "bundler", "not-the-password")
    with pytest.raises(InvalidInputError) as caught:
        ImageResolver().resolve(image(auth_repo, semver("*")), secret)
    message = str(caught.value)
    assert message.startswith(f"spec.images[web]: {auth_repo}: ")
    assert "refused the credentials of user 'bundler'" in message
    assert "not-the-password" not in message


def test_no_credentials_for_a_registry_that_wants_them(
    oci_registry_basic_auth: LocalRegistry, auth_repo: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        ImageResolver().resolve(image(auth_repo, semver("*")), None)
    assert "requires credentials and none were given; set its secretRef" in str(caught.value)


def test_fallback_credentials_for_a_command_run_by_a_person(
    oci_registry_basic_auth: LocalRegistry, auth_repo: str
) -> None:
    reg = oci_registry_basic_auth
    assert reg.username is not None and reg.password is not None
    credentials = Credentials(reg.username, reg.password)
    push_image(reg, repository_path(auth_repo), "1.0.0")
    settings = ImageResolverSettings(fallback_credentials=lambda host: credentials)
    assert ImageResolver(settings).resolve(image(auth_repo, semver("*")), None).tag == "1.0.0"


def test_a_secret_without_an_entry_for_the_registry(oci_registry: LocalRegistry, repo: str) -> None:
    with pytest.raises(InvalidInputError, match=r"spec.images\[web\].secretRef.*no entry for"):
        ImageResolver().resolve(image(repo, semver("*")), dockerconfig("elsewhere:5000", "u", "p"))


def test_unreachable_registry_is_transient() -> None:
    port = closed_port()
    repository = f"127.0.0.1:{port}/t/web"
    with pytest.raises(TransientError) as caught:
        ImageResolver().resolve(image(repository, semver("*")), None)
    assert str(caught.value).startswith(f"spec.images[web]: {repository}: cannot reach registry")


def test_a_repository_without_a_host_path() -> None:
    with pytest.raises(InvalidInputError, match=r"spec.images\[web\].repository"):
        ImageResolver().resolve(image("Web", semver("*")), None)


PAGED_TAGS = [str(n) for n in range(1, 8)]
INDEX = json.dumps(
    {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": "sha256:" + "c" * 64,
                "size": 2,
                "platform": {"os": "linux", "architecture": "amd64"},
            }
        ],
    }
).encode()


def _paging_registry(path: str, out: Out) -> None:
    """Tag lists by `n` and `last`, with a `Link` to the next page, as distribution 3 pages them;
    every manifest is INDEX."""
    url = urlsplit(path)
    if url.path.endswith("/tags/list"):
        query = parse_qs(url.query)
        size = int(query["n"][0])
        last = query.get("last", [""])[0]
        rest = [tag for tag in PAGED_TAGS if not last or int(tag) > int(last)]
        page, more = rest[:size], rest[size:]
        body = json.dumps({"name": "t/web", "tags": page}).encode()
        if more:
            whole(out, body, Link=f'<{url.path}?n={size}&last={page[-1]}>; rel="next"')
        else:
            whole(out, body)
    else:
        whole(out, INDEX, Content_Type="application/vnd.oci.image.index.v1+json")


def test_tag_list_pages_are_followed(hostile: HostileServer) -> None:
    hostile.answer = _paging_registry
    resolver = ImageResolver(ImageResolverSettings(page_size=2))
    policy = {"numerical": {"order": "asc"}}
    resolved = resolver.resolve(
        image(f"{hostile.host}/t/web", policy, platform="linux/amd64"), None
    )
    assert resolved.tag == "7"
    listed = [path for path, _ in hostile.seen if "/tags/list" in path]
    assert listed == [
        "/v2/t/web/tags/list?n=2",
        "/v2/t/web/tags/list?n=2&last=2",
        "/v2/t/web/tags/list?n=2&last=4",
        "/v2/t/web/tags/list?n=2&last=6",
    ]


def test_a_bad_policy_is_told_before_any_registry_is_asked() -> None:
    bad = image(
        f"127.0.0.1:{closed_port()}/t/web", {"alphabetical": {}}, filterTags={"pattern": "("}
    )
    with pytest.raises(InvalidInputError, match=r"spec.images\[web\].filterTags.pattern"):
        ImageResolver().resolve(bad, None)


# -- what a hostile registry answers --------------------------------------------------------------

DIGEST = "sha256:" + "d" * 64


def _registry_answering(tags: list[str], digest: str) -> Callable[[str, Out], None]:
    """A registry listing `tags` on one page, whose manifests all have the digest `digest`."""

    def answer(path: str, out: Out) -> None:
        if urlsplit(path).path.endswith("/tags/list"):
            whole(out, json.dumps({"name": "t/web", "tags": tags}).encode())
        else:
            whole(out, INDEX, Docker_Content_Digest=digest)

    return answer


# (id, tags listed, manifest digest header, what the error says; None: resolved)
HOSTILE_ANSWERS: list[tuple[str, list[str], str, str | None]] = [
    ("valid", ["1.0.0", "2.0.0"], DIGEST, None),
    ("tab-in-a-tag", ["1.0.0", "evil:\ttrue"], DIGEST, "1 tag(s) that are not OCI tags"),
    ("newline-in-a-tag", ["1.0.0\nkey: x"], DIGEST, "(first: '1.0.0\\nkey: x')"),
    ("tag-over-128", ["a" * 129], DIGEST, "not OCI tags (first: 'aaaa"),
    ("tag-starting-with-a-dot", [".hidden"], DIGEST, "not OCI tags"),
    ("digest-with-text-after", ["1.0.0"], DIGEST + " x: y", "is not an OCI digest"),
    ("digest-short", ["1.0.0"], "sha256:abc", "the manifest digest 'sha256:abc' is not"),
    ("digest-uppercase-hex", ["1.0.0"], DIGEST.upper(), "is not an OCI digest"),
    ("digest-without-algorithm", ["1.0.0"], "d" * 64, "is not an OCI digest"),
]


@pytest.mark.parametrize(
    ("tags", "digest", "message"),
    [c[1:] for c in HOSTILE_ANSWERS],
    ids=[c[0] for c in HOSTILE_ANSWERS],
)
def test_tags_and_digests_are_oci_grammar_before_they_are_used(
    hostile: HostileServer, tags: list[str], digest: str, message: str | None
) -> None:
    hostile.answer = _registry_answering(tags, digest)
    web = image(f"{hostile.host}/t/web", {"alphabetical": {"order": "asc"}})
    if message is None:
        assert ImageResolver().resolve(web, None).digest == digest
        return
    with pytest.raises(RegistryAnswerError) as raised:
        ImageResolver().resolve(web, None)
    assert raised.value.field == "spec.images[web]"
    assert message in raised.value.message
    assert "\t" not in str(raised.value) and "\n" not in str(raised.value)


def _challenging_registry(server: HostileServer, next_page: str) -> Callable[[str, Out], None]:
    """A registry asking for basic auth, whose first tag page links to `next_page`."""

    def answer(path: str, out: Out) -> None:
        if "Authorization" not in server.seen[-1][1]:
            whole(out, b"{}", 401, WWW_Authenticate='Basic realm="registry"')
        elif "last=" not in path:
            page = json.dumps({"name": "t/web", "tags": ["1.0.0"]}).encode()
            whole(out, page, Link=f'<{next_page}>; rel="next"')
        elif urlsplit(path).path.endswith("/tags/list"):
            whole(out, json.dumps({"name": "t/web", "tags": ["1.1.0"]}).encode())
        else:
            whole(out, INDEX, Docker_Content_Digest=DIGEST)

    return answer


# (id, where the next page is: the registry or elsewhere, and how it is written)
NEXT_PAGES = [
    ("relative-link", "/v2/t/web/tags/list?last=1.0.0", True),
    ("absolute-link-same-host", "http://{registry}/v2/t/web/tags/list?last=1.0.0", True),
    ("link-to-another-host", "http://{elsewhere}/v2/t/web/tags/list?last=1.0.0", False),
    ("link-to-another-scheme", "https://{registry}/v2/t/web/tags/list?last=1.0.0", False),
]


@pytest.mark.parametrize(
    ("link", "followed"), [c[1:] for c in NEXT_PAGES], ids=[c[0] for c in NEXT_PAGES]
)
def test_tag_pages_are_followed_only_on_the_registry_itself(
    hostile: HostileServer, elsewhere: HostileServer, link: str, followed: bool
) -> None:
    next_page = link.format(registry=hostile.host, elsewhere=elsewhere.host)
    hostile.answer = _challenging_registry(hostile, next_page)
    web = image(f"{hostile.host}/t/web", semver("^1"))
    resolver = ImageResolver(ImageResolverSettings(fallback_credentials=lambda host: SECRET_USER))
    if followed:
        assert resolver.resolve(web, None).tag == "1.1.0"
    else:
        with pytest.raises(RegistryAnswerError, match=r"next page of the tag list is on .* not"):
            resolver.resolve(web, None)
    assert elsewhere.seen == []  # neither the credentials nor anything else went there


SECRET_USER = Credentials("tenant", "s3cret")
