"""Reading YAML the way Kubernetes reads manifests: JSON-shaped data only, errors on one line.

Every YAML text bundler takes from a user or a server (input documents, Chart.yaml, kubeconfigs)
is parsed here, so that malformed input fails with one line naming the source (and, for a stream,
the document index) and the line, and never with a traceback, a hang or a silently changed value:

- a key repeated in one mapping is an error (kubectl's strict decoding refuses it; PyYAML would
  keep the last one silently), unless the caller asks for the lenient reading of kubeconfigs;
- aliases may not refer to the node that contains them, nor expand a document by more than
  MAX_ALIAS_NODES nodes ("billion laughs"), and no document nests deeper than MAX_DEPTH: everything
  downstream (validation, templating, hashing) walks the expanded tree;
- scalars are what JSON can carry: timestamps stay the text they were written as (as kubectl reads
  them), NaN, infinities and integers beyond 64 bits are errors instead of silently becoming null
  or floats, and the tags `!!binary`, `!!set`, `!!omap` and `!!pairs` are refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bundler.errors import InvalidInputError

MAX_DEPTH = 100
MAX_ALIAS_NODES = 1_000_000
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_MERGE_TAG = "tag:yaml.org,2002:merge"
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_REFUSED_TAGS = ("binary", "set", "omap", "pairs")


class DocumentError(Exception):
    """What is wrong with one document of a YAML stream, and where (1-based line, when known)."""

    def __init__(self, index: int, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.message = message
        self.line = line


@dataclass(frozen=True)
class LocatedDocument:
    """One document of a stream with where it and its fields are written (1-based lines).

    `lines` maps field paths as errors spell them (`spec.targets[0].clusterSelector`) to the line
    of the key (of a mapping entry) or of the item (of a list).
    """

    body: Any
    line: int
    lines: Mapping[str, int]

    def line_of(self, path: str | None) -> int:
        """The line of `path`, else of its closest written parent, else the document's."""
        while path:
            if path in self.lines:
                return self.lines[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return self.line


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader whose scalars are JSON's; the node checks run between composing and building."""


def _timestamp_as_text(loader: yaml.SafeLoader, node: ScalarNode) -> str:
    return str(loader.construct_scalar(node))


def _finite_float(loader: yaml.SafeLoader, node: ScalarNode) -> float:
    value = loader.construct_yaml_float(node)
    if not math.isfinite(value):
        raise ConstructorError(
            None, None, f"{node.value!r} is not a number JSON can carry", node.start_mark
        )
    return value


def _int64(loader: yaml.SafeLoader, node: ScalarNode) -> int:
    value = loader.construct_yaml_int(node)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ConstructorError(
            None,
            None,
            "the integer does not fit in 64 bits (quote it to keep it as text)",
            node.start_mark,
        )
    return value


def _refused(loader: yaml.SafeLoader, node: Node) -> Any:
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    raise ConstructorError(
        None, None, f"tag {tag} is not supported: the data must be JSON", node.start_mark
    )


_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _finite_float)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _int64)
for _tag in _REFUSED_TAGS:
    _StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refused)


def load_all(text: str | bytes, source: str) -> list[LocatedDocument]:
    """Every document of a YAML stream (an empty one's body None) with its lines; errors name
    `SOURCE:LINE`, the line of the problem where known, else of its document."""
    located: list[LocatedDocument] = []
    try:
        for node, body in _documents(text, unique_keys=True, with_nodes=True):
            located.append(LocatedDocument(body, node.start_mark.line + 1, _field_lines(node)))
    except DocumentError as problem:
        line = problem.line or (located[-1].line if located else 1)
        raise InvalidInputError(problem.message, obj=f"{source}:{line}") from None
    return located


def _field_lines(root: Node) -> dict[str, int]:
    """Field path -> line, for the mappings and lists of a document (aliases counted once)."""
    lines: dict[str, int] = {}
    stack: list[tuple[str, Node]] = [("", root)]
    seen: set[int] = set()
    while stack:
        path, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    child = f"{path}.{key.value}" if path else str(key.value)
                    lines.setdefault(child, key.start_mark.line + 1)
                    stack.append((child, value))
        elif isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                lines.setdefault(f"{path}[{index}]", item.start_mark.line + 1)
                stack.append((f"{path}[{index}]", item))
    return lines


def load(text: str | bytes, source: str, *, unique_keys: bool = True) -> Any:
    """The one document of a YAML text (None when empty); errors name `source`.

    `unique_keys=False` keeps the last of repeated keys, as kubectl reads kubeconfigs.
    """
    try:
        documents = list(_documents(text, unique_keys=unique_keys))
    except DocumentError as problem:
        raise InvalidInputError(problem.message, obj=source) from None
    if len(documents) > 1:
        raise InvalidInputError(
            f"malformed YAML: expected one document, found {len(documents)}", obj=source
        )
    return documents[0] if documents else None


def load_large(data: bytes, source: str) -> Any:
    """The one document of a large YAML answer from a server (a Helm repository's index.yaml),
    built by libyaml where it is installed; errors name `source`.

    Only the depth is checked, on a streaming pass first: libyaml's composer recurses on the C
    stack, so a deeply nested document would crash the process. Repeated keys, aliases and scalars
    are not checked: callers read a few known fields and check their types.
    """
    try:
        depth = 0
        for event in yaml.parse(data, Loader=_FAST_LOADER):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise InvalidInputError(_too_deep_message(), obj=source)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.load(data, Loader=_FAST_LOADER)  # a safe loader
    except yaml.YAMLError as err:
        raise InvalidInputError(describe_yaml_error(err, data), obj=source) from None


def _documents(text: str | bytes, *, unique_keys: bool, with_nodes: bool = False) -> Iterator[Any]:
    """Each document built, or with `with_nodes` (node, document) pairs."""
    try:
        loader = _StrictLoader(text)
    except yaml.YAMLError as err:  # the reader checks the first chunk of text at once
        raise DocumentError(0, describe_yaml_error(err, text), _error_line(err, text)) from None
    index = 0
    try:
        while _next_node_exists(loader, index, text):
            node = _compose(loader, index, text)
            if node is None:  # check_node said there is one: PyYAML never gets here
                break
            try:
                _check_tree(node, index, unique_keys=unique_keys)
                document = loader.construct_document(node)
            except yaml.YAMLError as err:
                raise DocumentError(
                    index, describe_yaml_error(err, text), _error_line(err, text)
                ) from None
            except DocumentError as problem:
                problem.line = problem.line or node.start_mark.line + 1
                raise
            yield (node, document) if with_nodes else document
            index += 1
    finally:
        loader.dispose()


def _next_node_exists(loader: _StrictLoader, index: int, text: str | bytes) -> bool:
    try:
        return bool(loader.check_node())
    except yaml.YAMLError as err:
        raise DocumentError(index, describe_yaml_error(err, text), _error_line(err, text)) from None


def _compose(loader: _StrictLoader, index: int, text: str | bytes) -> Node | None:
    try:
        node: Node | None = loader.get_node()
    except yaml.YAMLError as err:
        raise DocumentError(index, describe_yaml_error(err, text), _error_line(err, text)) from None
    except RecursionError:
        # PyYAML's composer recurses per level: far deeper than MAX_DEPTH, it runs out of stack.
        raise DocumentError(index, _too_deep_message()) from None
    return node


def _error_line(err: yaml.YAMLError, text: str | bytes) -> int | None:
    """The 1-based line a PyYAML error points at, when it does."""
    if isinstance(err, yaml.reader.ReaderError):  # a position in the text, not a mark
        return _line_of(text, err.position) if err.encoding == "unicode" else None
    mark = getattr(err, "problem_mark", None)
    return None if mark is None else int(mark.line) + 1


def describe_yaml_error(err: yaml.YAMLError, text: str | bytes = "") -> str:
    """A PyYAML error as one line: `malformed YAML (line N): problem`."""
    if isinstance(err, yaml.reader.ReaderError):
        if err.encoding != "unicode":  # the bytes did not decode
            byte = f"byte 0x{err.character:02x}" if err.character >= 0 else "bytes"
            encoding = "UTF-8" if err.encoding in ("?", "utf-8") else err.encoding.upper()
            return f"not {encoding} text ({byte} at offset {err.position})"
        line = _line_of(text, err.position)
        return f"malformed YAML (line {line}): control character {chr(err.character)!r}"
    mark = getattr(err, "problem_mark", None)
    where = f" (line {mark.line + 1})" if mark is not None else ""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"malformed YAML{where}: {problem}"


def _line_of(text: str | bytes, position: int) -> int:
    prefix = text[:position]
    newline = b"\n" if isinstance(prefix, bytes) else "\n"
    return prefix.count(newline) + 1  # type: ignore[arg-type]


def _too_deep_message() -> str:
    return f"malformed YAML: nested more than {MAX_DEPTH} levels deep"


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _check_tree(root: Node, index: int, *, unique_keys: bool) -> None:
    """Refuse repeated keys, self-referring aliases, and trees too deep or too large expanded.

    One pass over the distinct nodes (aliases share theirs), computing for each the size and the
    height of the tree it expands to; a node met again while still being measured is its own
    ancestor.
    """
    measured: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            kids = [measured[id(kid)] for kid in _children(node)]
            size = 1 + sum(s for s, _ in kids)
            height = 1 + max((h for _, h in kids), default=0)
            if height > MAX_DEPTH:
                raise DocumentError(index, _too_deep_message())
            measured[id(node)] = (size, height)
            open_nodes.discard(id(node))
            continue
        if id(node) in measured:
            continue
        if unique_keys and isinstance(node, MappingNode):
            _check_unique_keys(node, index)
        open_nodes.add(id(node))
        stack.append((node, True))
        for kid in _children(node):
            if id(kid) in open_nodes:
                line = kid.start_mark.line + 1
                raise DocumentError(
                    index,
                    f"malformed YAML (line {line}): an alias refers to a node containing it",
                    line,
                )
            if id(kid) not in measured:
                stack.append((kid, False))
    expanded = measured[id(root)][0]
    if expanded - len(measured) > MAX_ALIAS_NODES:
        raise DocumentError(
            index,
            f"malformed YAML: aliases expand this document by more than {MAX_ALIAS_NODES} nodes",
        )


def _check_unique_keys(node: MappingNode, index: int) -> None:
    first_line: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag == _MERGE_TAG:
            continue
        line = key.start_mark.line + 1
        if (key.tag, key.value) in first_line:
            raise DocumentError(
                index,
                f"malformed YAML (line {line}): key {key.value!r} is repeated "
                f"(first on line {first_line[key.tag, key.value]})",
                line,
            )
        first_line[key.tag, key.value] = line
