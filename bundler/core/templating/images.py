"""`images` in the template context: the Bundle's resolved images as the cluster sees them.

`images.NAME` is a map of `repository`, `tag`, `digest` and `ref` (`repository:tag@digest`). An
image without a resolution (the registry could not be asked, no tag matches, ...) is not a
missing key that `default` could paper over: reading it raises ImageNotResolved, which the render
turns into ImageNotResolvedError for this cluster only. So exactly the clusters whose values read
the image are held back; a cluster whose values never mention it renders as usual.

Templating sees images as plain data (:data:`ImageView`): the fields of a resolved image, or an
:class:`UnresolvedImage`; planning makes the views from the manager's answers
(bundler.core.images.wanted), so that templating, which renders in worker processes, needs
nothing of the API models.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from bundler.errors import TemplateError


@dataclass(frozen=True)
class UnresolvedImage:
    """An image that has no resolution: `reason` a CamelCase word, `message` the cause."""

    reason: str
    message: str


#: An image as a template sees it: its fields (repository, tag, digest, ref), or why it has none.
ImageView = Mapping[str, str] | UnresolvedImage


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
        self.detail = message


class TemplateImages(Mapping[str, dict[str, str]]):
    """The images by name. Reading an unresolved one raises, also through `items()`, `in` or
    `${ images }` as a whole: whatever reads it is held, never handed a partial answer."""

    def __init__(self, views: Mapping[str, ImageView]) -> None:
        self._answers = dict(views)

    def __getitem__(self, name: str) -> dict[str, str]:
        view = self._answers[name]
        if isinstance(view, UnresolvedImage):
            raise ImageNotResolved(name, view.reason, view.message)
        return dict(view)

    def __iter__(self) -> Iterator[str]:
        return iter(self._answers)

    def __len__(self) -> int:
        return len(self._answers)
