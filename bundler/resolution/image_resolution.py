"""Images: resolved centrally, once per Bundle generation (and every pollInterval), like versions.

Each distinct (image name, effective selection) that the Bundle's targeted clusters want
(bundler.core.images.wanted) is asked of the pluggable ImageResolverFn once, with the decoded data
of the image's `secretRef` Secret from the Bundle's workspace. A resolution that fails is not an
exception here but an ImageFailure answer: the clusters whose values read that image are held
(they keep what they run), the others proceed, and the Bundle's ImagesResolved condition names
the image and the cause. Successful answers are kept for the Bundle's generation until its
`spec.helm.pollInterval` has passed (then every image is asked again, so a newly pushed tag rolls
out); failures are asked again on the next pass, and for an unreachable registry the controller
retries the Bundle with backoff (`first_unavailable`). A `secretRef` naming a Secret that is not
registry credentials (bundler.core.credentials) is refused before its data is read:
`CredentialsRefused`, naming the Secret and the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from bundler.api.bundle import Bundle
from bundler.api.images import BundleImage, ResolvedImage
from bundler.core.credentials import credentials_refusal, refusal_message
from bundler.core.images.wanted import ImageAnswer, ImageFailure, ImageKey, ImageQuery
from bundler.core.validation import bundle_ref
from bundler.errors import InvalidInputError, TransientError
from bundler.resolution.poll_cache import PollCache
from bundler.resolution.resolvers import ImageResolverFn
from bundler.resolution.version_resolution import decoded_data
from bundler.runtime.clock import Clock
from bundler.store.protocol import Obj

REASON_UNAVAILABLE = "RegistryUnavailable"
REASON_REJECTED = "ImageRejected"
REASON_CREDENTIALS = "CredentialsNotFound"
REASON_CREDENTIALS_REFUSED = "CredentialsRefused"
REASON_NO_RESOLVER = "NoImageResolver"

# A workspace Secret by name, or None (the bundle controller reads its informer).
SecretLookup = Callable[[str], Obj | None]


class ImageResolution:
    """Resolves a Bundle's images and remembers the successful answers for its generation."""

    def __init__(self, resolver: ImageResolverFn | None, clock: Clock) -> None:
        self._resolver = resolver
        self._kept: PollCache[Mapping[ImageKey, ResolvedImage]] = PollCache(clock)

    def resolve(
        self,
        bundle: Bundle,
        queries: Iterable[ImageQuery],
        secrets: SecretLookup,
        kubeconfig_of: Mapping[str, str] | None = None,
    ) -> dict[ImageKey, ImageAnswer]:
        """An answer for every query: kept ones as they are, the others asked now
        (`kubeconfig_of`: the workspace's kubeconfig Secrets, never used as credentials)."""
        wanted = {q.key: q.image for q in queries}
        if not wanted:
            return {}
        cached = self._kept.get(bundle)
        kept: dict[ImageKey, ResolvedImage] = dict(cached.answers) if cached else {}
        answers: dict[ImageKey, ImageAnswer] = {}
        for key, image in sorted(wanted.items()):
            if key in kept:
                answers[key] = kept[key]
                continue
            try:
                kept[key] = answers[key] = self._resolve_one(bundle, image, secrets, kubeconfig_of)
            except TransientError as error:
                answers[key] = ImageFailure(REASON_UNAVAILABLE, error.message)
            except InvalidInputError as error:
                answers[key] = _rejected(error)
        # Images asked later in the generation are asked again with the others at the next poll.
        self._kept.put(bundle, kept, None if cached is None else cached.at)
        return answers

    def seconds_until_poll(self, bundle: Bundle) -> float | None:
        """When the images of `bundle` are due to be resolved again (pollInterval), if ever."""
        return self._kept.seconds_until_poll(bundle)

    def forget(self, bundle: str) -> None:
        self._kept.forget(bundle)

    def _resolve_one(
        self,
        bundle: Bundle,
        image: BundleImage,
        secrets: SecretLookup,
        kubeconfig_of: Mapping[str, str] | None,
    ) -> ResolvedImage:
        if self._resolver is None:
            raise _NoResolverError(
                "this manager has no image resolver; images cannot be resolved",
                obj=bundle_ref(bundle),
                field=f"spec.images[{image.name}]",
            )
        secret = None
        if image.secretRef is not None:
            found = secrets(image.secretRef.name)
            if found is None:
                raise _MissingSecretError(
                    f"Secret {bundle.metadata.namespace}/{image.secretRef.name} with the "
                    "registry credentials does not exist",
                    field=f"spec.images[{image.name}].secretRef",
                )
            why = credentials_refusal(found, kubeconfig_of)
            if why is not None:
                workspace = bundle.metadata.namespace or ""
                raise _RefusedSecretError(
                    refusal_message(workspace, image.secretRef.name, why),
                    field=f"spec.images[{image.name}].secretRef",
                )
            secret = decoded_data(found)
        return self._resolver(image, secret).model_copy(update={"name": image.name})


def first_unavailable(
    queries: Iterable[ImageQuery], answers: Mapping[ImageKey, ImageAnswer]
) -> TransientError | None:
    """The first image whose registry could not be reached, as the error to retry the Bundle on
    (with backoff: its users are held meanwhile, the other clusters already got theirs)."""
    for query in queries:
        answer = answers.get(query.key)
        if isinstance(answer, ImageFailure) and answer.reason == REASON_UNAVAILABLE:
            return TransientError(answer.message, field=f"spec.images[{query.image.name}]")
    return None


class _MissingSecretError(InvalidInputError):
    """The image's secretRef names no Secret (its creation wakes the Bundle)."""


class _RefusedSecretError(InvalidInputError):
    """The image's secretRef names a Secret that is not registry credentials."""


class _NoResolverError(InvalidInputError):
    """The manager was started without an image resolver."""


def _rejected(error: InvalidInputError) -> ImageFailure:
    if isinstance(error, _MissingSecretError):
        return ImageFailure(REASON_CREDENTIALS, error.message)
    if isinstance(error, _RefusedSecretError):
        return ImageFailure(REASON_CREDENTIALS_REFUSED, error.message)
    if isinstance(error, _NoResolverError):
        return ImageFailure(REASON_NO_RESOLVER, error.message)
    return ImageFailure(REASON_REJECTED, error.message)
