"""Resolving a Bundle image (`spec.images[]`) to a tag and a digest in its registry.

`ImageResolver.resolve` lists the repository's tags (every page, `page_size` a page, at most
`max_tags` and 4 MiB together: bundler.oci.registry.list_tags), ranks them with the image's
policy (bundler.core.images: Flux's ImagePolicy semantics, ignoreTags, filterTags), then asks the
registry for the chosen tag's manifest digest (HEAD). With a `platform`, the best tags are read in
turn (at most `platform_tries` of them) and the first whose index offers that platform wins; the
digest is then the tag's own (the index's), so a node of any platform the index offers pulls the
same reference.

Bounded like the chart resolver: every request has `timeout`, the tag listing and the manifest
reads are each one operation under `deadline`, every body a size cap (bundler.oci.limits).

Errors name the image (`spec.images[web]`) and the repository, never a secret: an unreachable
registry, a timeout or a 5xx is a TransientError; a refusal (401/403) an InvalidInputError
saying whether credentials were refused or needed; no tag matching the policy an
InvalidInputError naming the policy and the number of tags seen.

Repositories are `HOST[:PORT]/PATH`, the host always explicit (never Docker Hub by default).
A loopback host, one in `plain_http_hosts`, or an image with `insecure: true` is spoken to over
plain HTTP; any other over HTTPS. Credentials come from the image's `secretRef` Secret (its data
passed in, decoded), else from `fallback_credentials` (the Docker config, for a command run by a
person), else none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from bundler.api.images import BundleImage, ResolvedImage
from bundler.core.images import check_policy, choose_tag, ranked_tags
from bundler.core.images.filters import image_field
from bundler.errors import BundlerError, InvalidInputError, RegistryAuthError
from bundler.oci.credentials import Credentials
from bundler.oci.image_manifests import Platform, manifest_digest, platform_digest
from bundler.oci.reference import SCHEME, ChartRepository, parse_repository, uses_plain_http
from bundler.oci.registry import (
    MAX_TAGS,
    RegistryOptions,
    list_tags,
    registry_client,
    repository_container,
)
from bundler.oci.secret_credentials import credentials_from_secret

DEFAULT_TIMEOUT = 10.0
DEFAULT_DEADLINE = 60.0
DEFAULT_PAGE_SIZE = 1000
DEFAULT_PLATFORM_TRIES = 10
MANAGER_CREDENTIALS_HINT = (
    "set its secretRef to a kubernetes.io/dockerconfigjson or kubernetes.io/basic-auth Secret of "
    "the workspace"
)

FallbackCredentials = Callable[[str], Credentials | None]


@dataclass(frozen=True)
class ImageResolverSettings:
    """`timeout`: seconds per request; `deadline`: seconds per operation (a tag listing with all
    its pages; the manifest reads of one resolution); `page_size`: tags asked per page;
    `max_tags`: the most tags a repository may list; `platform_tries`: how many of the best tags
    are read for a platform; `credentials_hint`: what to do when a registry wants credentials
    and got none."""

    timeout: float = DEFAULT_TIMEOUT
    deadline: float = DEFAULT_DEADLINE
    plain_http_hosts: frozenset[str] = frozenset()
    page_size: int = DEFAULT_PAGE_SIZE
    max_tags: int = MAX_TAGS
    platform_tries: int = DEFAULT_PLATFORM_TRIES
    fallback_credentials: FallbackCredentials | None = field(default=None, compare=False)
    credentials_hint: str = MANAGER_CREDENTIALS_HINT

    def __post_init__(self) -> None:
        if self.timeout <= 0 or self.deadline <= 0:
            raise ValueError("image resolver: timeout and deadline must be positive")
        if min(self.page_size, self.max_tags, self.platform_tries) < 1:
            raise ValueError("image resolver: page_size, max_tags, platform_tries must be >= 1")


class ImageResolver:
    """(a Bundle image, its decoded secretRef data or None) -> the tag and digest it resolves to."""

    def __init__(self, settings: ImageResolverSettings | None = None) -> None:
        self.settings = settings or ImageResolverSettings()

    def resolve(self, image: BundleImage, secret: Mapping[str, str] | None) -> ResolvedImage:
        check_policy(image)
        repository = image_repository(image)
        credentials = self._credentials(image, repository.host, secret)
        options = self._options(image, repository.host, credentials)
        try:
            tags = list_tags(
                repository,
                options,
                page_size=self.settings.page_size,
                max_tags=self.settings.max_tags,
            )
            tag, digest = self._choose(image, repository, tags, options)
        except BundlerError as error:
            raise self._explained(image, error, credentials) from None
        return ResolvedImage(name=image.name, repository=image.repository, tag=tag, digest=digest)

    def _choose(
        self,
        image: BundleImage,
        repository: ChartRepository,
        tags: Sequence[str],
        options: RegistryOptions,
    ) -> tuple[str, str]:
        if image.platform is None:
            tag = choose_tag(image, tags)
            with registry_client(repository.host, repository.url, options) as client:
                return tag, manifest_digest(client, repository_container(repository, tag))
        tried = ranked_tags(image, tags)[: self.settings.platform_tries]
        if not tried:
            choose_tag(image, tags)  # raises the error naming the policy and the tags seen
        platform = Platform.parse(image.platform)
        with registry_client(repository.host, repository.url, options) as client:
            for tag in tried:
                container = repository_container(repository, tag)
                digest = platform_digest(client, container, platform)
                if digest is not None:
                    return tag, digest
        raise InvalidInputError(
            f"{image.repository}: none of the {len(tried)} best tags matching the policy "
            f"({', '.join(tried)}) has a manifest for platform {image.platform}",
            field=image_field(image, "platform"),
        )

    def _credentials(
        self, image: BundleImage, host: str, secret: Mapping[str, str] | None
    ) -> Credentials | None:
        if secret is not None:
            return credentials_from_secret(secret, host, field=image_field(image, "secretRef"))
        fallback = self.settings.fallback_credentials
        return None if fallback is None else fallback(host)

    def _options(
        self, image: BundleImage, host: str, credentials: Credentials | None
    ) -> RegistryOptions:
        plain = bool(image.insecure) or uses_plain_http(host, self.settings.plain_http_hosts)
        return RegistryOptions(
            credentials=credentials,
            plain_http=plain,
            timeout=self.settings.timeout,
            deadline=self.settings.deadline,
        )

    def _explained(
        self, image: BundleImage, error: BundlerError, credentials: Credentials | None
    ) -> BundlerError:
        """`error` naming the image and repository; a refusal says what was refused."""
        if error.field is not None and error.field.startswith(image_field(image)):
            return error  # from the policy: it names the image already
        message = error.message
        if isinstance(error, RegistryAuthError):
            message = (
                f"the registry requires credentials and none were given; "
                f"{self.settings.credentials_hint}"
                if credentials is None
                else f"the registry refused the credentials of user {credentials.username!r} "
                f"({message})"
            )
        return type(error)(f"{image.repository}: {message}", field=image_field(image))


def image_repository(image: BundleImage) -> ChartRepository:
    """Where `image` lives: its registry host and repository path, checked."""
    try:
        return parse_repository(f"{SCHEME}{image.repository}")
    except InvalidInputError as error:
        raise InvalidInputError(
            f"{image.repository!r} is not HOST[:PORT]/PATH: {error.message}",
            field=image_field(image, "repository"),
        ) from None
