"""Choosing an image's tag, as pure data: a target's override applied to a Bundle image
(selection), the tags a policy may consider (filters: ignoreTags, filterTags) and the policy's
order over them (policy: semver, alphabetical, numerical, with Flux's ImagePolicy semantics)."""

from bundler.core.images.policy import check_policy, choose_tag, ranked_tags
from bundler.core.images.selection import effective_image

__all__ = ["check_policy", "choose_tag", "effective_image", "ranked_tags"]
