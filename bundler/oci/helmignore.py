"""`.helmignore` rules, evaluated exactly as Helm evaluates them, so a package holds Helm's files.

Helm's rules (pkg/ignore), which differ from .gitignore in places:
- blank lines and `#` comments are skipped; `**` is an error;
- a trailing `/` makes a rule match directories only;
- a leading `/` anchors the rule at the chart root; a rule with a `/` elsewhere matches the whole
  relative path; a rule without `/` matches the base name at any depth;
- globs follow Go's `filepath.Match`: `*` and `?` never cross `/`, `[...]` with `^` to negate,
  `\\` escapes;
- rules are tried in order and the first rule that decides wins; a negated rule (`!pattern`)
  ignores every path it does NOT match, and passes a path it matches on to the next rule;
- `templates/.?*` is always added (hidden files under templates/ are never packaged).
An ignored directory is skipped whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bundler.errors import InvalidInputError

IGNORE_FILE = ".helmignore"
DEFAULT_RULES = ("templates/.?*",)


@dataclass(frozen=True)
class Rule:
    """One parsed rule: a compiled glob, what it applies to, and whether it is negated."""

    raw: str
    regex: re.Pattern[str]
    negate: bool
    dirs_only: bool
    whole_path: bool

    def matches(self, path: str) -> bool:
        subject = path if self.whole_path else path.rsplit("/", 1)[-1]
        return self.regex.fullmatch(subject) is not None


@dataclass(frozen=True)
class IgnoreRules:
    """The ordered rules of one chart."""

    rules: tuple[Rule, ...]

    def ignores(self, path: str, *, is_dir: bool) -> bool:
        """Whether `path` (relative to the chart root, `/`-separated) stays out of the package."""
        for rule in self.rules:
            if rule.negate:
                if (rule.dirs_only and not is_dir) or not rule.matches(path):
                    return True
                continue
            if rule.dirs_only and not is_dir:
                continue
            if rule.matches(path):
                return True
        return False


def _class_end(pattern: str, start: int) -> int:
    """Index just past the `]` closing the class opened at `start`, or -1."""
    index = start + 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    while index < len(pattern):
        if pattern[index] == "\\":
            index += 2
            continue
        if pattern[index] == "]":
            return index + 1
        index += 1
    return -1


def _translate_class(body: str) -> str:
    negate = body.startswith("^")
    items = re.sub(r"\\(.)", r"\1", body[1:] if negate else body)
    if not items:
        raise ValueError("empty character class")
    escaped = "".join("\\" + c if c in "\\^[]" else c for c in items)
    return f"[^{escaped}]" if negate else f"[{escaped}]"


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Go `filepath.Match` pattern; ValueError when it is malformed."""
    tokens: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            tokens.append("[^/]*")
        elif char == "?":
            tokens.append("[^/]")
        elif char == "\\":
            if index + 1 >= len(pattern):
                raise ValueError("trailing backslash")
            index += 1
            tokens.append(re.escape(pattern[index]))
        elif char == "[":
            end = _class_end(pattern, index)
            if end < 0:
                raise ValueError("unterminated character class")
            tokens.append(_translate_class(pattern[index + 1 : end - 1]))
            index = end
            continue
        else:
            tokens.append(re.escape(char))
        index += 1
    try:
        return re.compile("".join(tokens))
    except re.error as err:
        raise ValueError(str(err)) from err


def parse_rule(line: str) -> Rule | None:
    """Parse one line; None for blanks and comments; ValueError for rules Helm rejects."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    if "**" in text:
        raise ValueError("double-star (**) syntax is not supported")
    negate = text.startswith("!")
    text = text.removeprefix("!")
    dirs_only = text.endswith("/")
    text = text.removesuffix("/")
    anchored = text.startswith("/")
    text = text.removeprefix("/")
    return Rule(
        raw=line.strip(),
        regex=glob_to_regex(text),
        negate=negate,
        dirs_only=dirs_only,
        whole_path=anchored or "/" in text,
    )


def parse_rules(lines: Sequence[str], *, source: str) -> IgnoreRules:
    """Parse a `.helmignore` (lines in order) plus Helm's default rule."""
    rules: list[Rule] = []
    for number, line in enumerate([*lines, *DEFAULT_RULES], start=1):
        try:
            rule = parse_rule(line)
        except ValueError as err:
            raise InvalidInputError(f"line {number} {line.strip()!r}: {err}", obj=source) from err
        if rule is not None:
            rules.append(rule)
    return IgnoreRules(rules=tuple(rules))
