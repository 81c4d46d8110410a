"""`images` in the template context: the Bundle's resolved images as the cluster sees them.

`images.NAME` is a map of `repository`, `tag`, `digest` and `ref` (`repository:tag@digest`). An
image without a resolution (the registry could not be asked, no tag matches, ...) is not a
missing key that `default` could paper over: reading it raises ImageNotResolved, which the render
turns into ImageNotResolvedError for this cluster only. So exactly the clusters whose values read
the image are held back; a cluster whose values never mention it renders as usual.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from bundler.api.images import ResolvedImage
from bundler.core.images.wanted import ImageAnswer, image_ref
from bundler.errors import TemplateError


class ImageNotResolved(Exception):  # noqa: N818 - raised inside Jinja, never seen outside
    """Raised by a template reading an image that has no resolution."""

    def __init__(self, name: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        self.reason = reason
        self.message = message


class ImageNotResolvedError(TemplateError):
    """A cluster's values read an image that has no resolution: the cluster keeps what it runs."""

    def __init__(
        self, image: str, reason: str, message: str, *, obj: str | None, field: str | None
    ) -> None:
        super().__init__(f"image {image!r} is not resolved: {message}", obj=obj, field=field)
        self.image = image
        self.reason = reason


class TemplateImages(Mapping[str, dict[str, str]]):
    """The images by name. Reading an unresolved one raises, also through `items()`, `in` or
    `${ images }` as a whole: whatever reads it is held, never handed a partial answer."""

    def __init__(self, answers: Mapping[str, ImageAnswer]) -> None:
        self._answers = dict(answers)

    def __getitem__(self, name: str) -> dict[str, str]:
        answer = self._answers[name]
        if isinstance(answer, ResolvedImage):
            return image_fields(answer)
        raise ImageNotResolved(name, answer.reason, answer.message)

    def __iter__(self) -> Iterator[str]:
        return iter(self._answers)

    def __len__(self) -> int:
        return len(self._answers)


def image_fields(image: ResolvedImage) -> dict[str, str]:
    return {
        "repository": image.repository,
        "tag": image.tag,
        "digest": image.digest,
        "ref": image_ref(image),
    }
