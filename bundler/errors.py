"""The error tree every layer raises and the CLI and controllers translate at the boundary.

BundlerError
├── InvalidInputError   the user's input is wrong; retrying will not help (CLI exit 2, Ready=False)
│   ├── RegistryAnswerError  a registry's answer is unusable: not found, not a chart, over a cap
│   │                        (CLI exit 1: the command line was fine; Ready=False)
│   └── RegistryAuthError    a registry refused the client (401/403): its credentials or rights
├── TemplateError       values of one bundle failed to render for one cluster (confined to it)
│   └── TemplateLimitExceeded  the render hit a bound the operating system enforces (memory,
│                              CPU time, its deadline) and was stopped
├── TagTakenError       a push would replace a different chart under the same tag (CLI exit 1)
├── NothingToReadError  the inputs hold no object bundler reads (CLI exit 1)
└── TransientError      the world is not ready or not reachable; retry with backoff

Messages name the object, the field and the cause, and never carry secret values.
"""

from __future__ import annotations

from typing import Self


class BundlerError(Exception):
    """Base of every error bundler raises on purpose."""

    def __init__(self, message: str, *, obj: str | None = None, field: str | None = None) -> None:
        self.message = message
        self.obj = obj
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        parts = [p for p in (self.obj, self.field) if p]
        return ": ".join([*parts, self.message])

    def about(self, obj: str) -> Self:
        """The same error about another object (one that failed the very same way)."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.obj = obj
        clone.args = (clone.__str__(),)
        return clone


class InvalidInputError(BundlerError):
    """Input that can never succeed as written: bad YAML, unknown fields, bad selectors."""


class RegistryAnswerError(InvalidInputError):
    """What a registry or Helm repository answered can never be used as it is (a missing chart,
    an artifact that is not a chart, a body over a size cap): a controller treats it as invalid
    input, since only a change on the server fixes it; to the CLI it is a failure, not a bad
    argument."""


class RegistryAuthError(InvalidInputError):
    """A registry or its token service refused the client (401, 403): only other credentials or
    other rights fix it."""


class TemplateError(BundlerError):
    """A values template failed for one bundle on one cluster."""


class TemplateLimitExceeded(TemplateError):  # noqa: N818 - the name the issue and docs use
    """A values render hit a bound the operating system enforces (the worker's memory limit, its
    CPU time, the render's deadline): the worker was replaced, the cluster keeps what it runs.
    `limit` names the bound (memory, cpu, deadline, stopped)."""

    def __init__(
        self, message: str, *, limit: str, obj: str | None = None, field: str | None = None
    ) -> None:
        super().__init__(message, obj=obj, field=field)
        self.limit = limit


class TagTakenError(BundlerError):
    """A chart push would put different content under a tag that already holds a chart: the same
    version would mean two charts. Refused unless forced."""


class NothingToReadError(BundlerError):
    """The files given hold no object bundler reads (no Bundle, Cluster, ClusterGroup, Cluster API
    Cluster): the message says what was read, `notices` what was skipped and why."""

    def __init__(self, message: str, *, notices: list[str] | None = None) -> None:
        self.notices = list(notices or [])
        super().__init__(message)


class TransientError(BundlerError):
    """Something outside bundler failed in a way that may heal: retry with backoff."""
