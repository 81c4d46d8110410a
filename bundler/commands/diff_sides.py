"""The two sides of `bundler diff`: a file, a directory, or a git revision of the working
repository.

A side naming an existing path is read as `-f` reads it. Any other side must be a revision of the
git repository holding the current directory (`main`, `origin/main`, `HEAD~1`, a commit); its tree
is exported with `git archive` into a temporary directory and read at the same paths as the other
side (relative to the repository's top), or whole when both sides are revisions. A path the
revision does not have yet is an empty side: everything under it is created.

A revision's symbolic links are extracted only where they stay inside its tree (tarfile's `data`
filter): one that is absolute or leads out of the tree is left out, and when it is an input file
of the side (a `.yaml` or `.yml` under the paths read) the side is refused in one line naming the
link, since what it points at is no part of the revision.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bundler.errors import BundlerError, InvalidInputError
from bundler.inputs import YAML_SUFFIXES

GIT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Side:
    """What a `--from`/`--to` argument names: `paths` on disk, or a git `revision`."""

    flag: str
    text: str
    revision: str | None = None

    @property
    def is_revision(self) -> bool:
        return self.revision is not None


def parse_side(text: str, flag: str) -> Side:
    """An existing path, else a git revision; InvalidInputError naming `flag` for neither."""
    if Path(text).exists():
        return Side(flag, text)
    if text and not text.startswith("-"):
        commit = _git("rev-parse", "--verify", "--quiet", f"{text}^{{commit}}", check=False)
        if commit:
            return Side(flag, text, revision=commit.strip())
    raise InvalidInputError(
        f"{text!r} is neither a file, a directory nor a git revision of the repository at "
        f"{Path.cwd()}",
        field=flag,
    )


@contextmanager
def side_paths(side: Side, other: Side) -> Iterator[list[str]]:
    """The input paths of `side`, its revision's tree exported meanwhile when it is one."""
    if not side.is_revision:
        yield [side.text]
        return
    top = Path(_git("rev-parse", "--show-toplevel").strip())
    relative = "." if other.is_revision else _inside(top, Path(other.text), other.flag)
    # From the top: in a subdirectory, git archive writes that subdirectory's tree alone.
    archive = _git_bytes("-C", str(top), "archive", "--format=tar", side.revision or "")
    with tempfile.TemporaryDirectory(prefix="bundler-diff-") as scratch:
        links = _OutsideLinks()
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(scratch, filter=links.filter)
        links.check(side, relative)
        path = Path(scratch, relative)
        yield [str(path)] if path.exists() else []


class _OutsideLinks:
    """tarfile's `data` filter, leaving out (and remembering) the links it refuses."""

    def __init__(self) -> None:
        self.skipped: list[tuple[str, str]] = []

    def filter(self, member: tarfile.TarInfo, destination: str) -> tarfile.TarInfo | None:
        try:
            return tarfile.data_filter(member, destination)
        except (tarfile.AbsoluteLinkError, tarfile.LinkOutsideDestinationError):
            self.skipped.append((member.name, member.linkname))
            return None
        except tarfile.FilterError as err:  # git archive writes none of these: a broken archive
            raise BundlerError(f"git archive wrote an entry tar refuses: {err}") from None

    def check(self, side: Side, relative: str) -> None:
        """InvalidInputError for the first left-out link that the side would read as input."""
        under = "" if relative == "." else relative.rstrip("/") + "/"
        for name, target in self.skipped:
            if name.startswith(under) and name.endswith(YAML_SUFFIXES):
                raise InvalidInputError(
                    f"{side.text}:{name} is a symbolic link out of the repository (to {target}); "
                    "a revision is read only inside its tree",
                    field=side.flag,
                )


def _inside(top: Path, path: Path, flag: str) -> str:
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(top.resolve()))
    except ValueError:
        raise InvalidInputError(
            f"{path} is outside the git repository at {top}: a revision is read at the same "
            "paths as the other side",
            field=flag,
        ) from None


def _command(args: tuple[str, ...]) -> str:
    """The git sub-command of `args` (after a leading `-C DIR`)."""
    return args[2] if args[:1] == ("-C",) else args[0]


def _git(*args: str, check: bool = True) -> str:
    return _git_bytes(*args, check=check).decode("utf-8", "replace")


def _git_bytes(*args: str, check: bool = True) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except FileNotFoundError:
        raise BundlerError("git is not installed: a side that is a revision needs it") from None
    except subprocess.TimeoutExpired:
        raise BundlerError(f"git {_command(args)} took longer than {GIT_TIMEOUT_S:g}s") from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BundlerError(
            f"git {_command(args)} failed: {message[-1] if message else done.returncode}"
        )
    return done.stdout if done.returncode == 0 else b""
