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
  or floats, strings holding a lone surrogate (`"\\ud800"`, which no encoding can write) are
  errors, and the tags `!!binary`, `!!set`, `!!omap` and `!!pairs` are refused;
- a text longer than MAX_INPUT_BYTES is refused before it is parsed, and running out of memory
  is reported as an error of the input, not a crash.

libyaml parses and composes where it is installed (a 4.4 MiB values file: 27 s and 500 MiB in
pure Python); its composer recurses on the C stack, so the nesting depth is checked on a streaming
pass first. Every check above runs on the composed nodes, which carry their line either way; lists,
maps and JSON scalars are then built directly (PyYAML's generic construction costs more than
parsing), anything else through PyYAML's constructors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bundler.errors import InvalidInputError

MAX_DEPTH = 100
# What libyaml says where it limits nesting itself (its limit is deeper than MAX_DEPTH).
_LIBYAML_TOO_DEEP = "maximum nesting depth"
MAX_ALIAS_NODES = 1_000_000
#: The longest YAML text read from a user (one input file, one kubeconfig).
MAX_INPUT_BYTES = 16 << 20
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Longer than any 64-bit integer is written, even in binary; Python refuses to convert
#: integers of more than 4300 digits, and converting long ones is quadratic.
_MAX_INT_CHARS = 80

_MERGE_TAG = "tag:yaml.org,2002:merge"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "timestamp")
)
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_C_PARSER = _FAST_LOADER is not yaml.SafeLoader
_REFUSED_TAGS = ("binary", "set", "omap", "pairs")
_SURROGATE = re.compile("[\ud800-\udfff]")


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


class _StrictLoader(_FAST_LOADER):  # type: ignore[misc]
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
    too_long = len(node.value.replace("_", "")) > _MAX_INT_CHARS
    value = INT64_MAX + 1 if too_long else loader.construct_yaml_int(node)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ConstructorError(
            None,
            None,
            "the integer does not fit in 64 bits (quote it to keep it as text)",
            node.start_mark,
        )
    return value


def _text(loader: yaml.SafeLoader, node: ScalarNode) -> str:
    value = loader.construct_yaml_str(node)
    surrogate = _SURROGATE.search(value)
    if surrogate is not None:
        code = f"\\u{ord(surrogate.group()):04x}"
        raise ConstructorError(
            None, None, f"the string holds {code}, half of a character, alone", node.start_mark
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
_StrictLoader.add_constructor("tag:yaml.org,2002:str", _text)
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
        _check_depth_streaming(data)
        return yaml.load(data, Loader=_FAST_LOADER)  # a safe loader
    except DocumentError as problem:
        raise InvalidInputError(problem.message, obj=source) from None
    except yaml.YAMLError as err:
        raise InvalidInputError(describe_yaml_error(err, data), obj=source) from None


def _check_depth_streaming(text: str | bytes) -> None:
    """Refuse a stream nesting deeper than MAX_DEPTH, reading its events without building it."""
    depth, index, line = 0, 0, None
    try:
        for event in yaml.parse(text, Loader=_FAST_LOADER):
            if isinstance(event, yaml.NodeEvent) and depth == 0 and event.start_mark is not None:
                line = event.start_mark.line + 1  # a document's root: its line names it
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise DocumentError(index, _too_deep_message(), line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.DocumentEndEvent):
                index += 1
    except yaml.YAMLError as err:
        if _LIBYAML_TOO_DEEP in str(getattr(err, "problem", "")):
            # A libyaml with its own nesting limit refuses before the depth here passes ours.
            raise DocumentError(index, _too_deep_message(), line) from None
        raise DocumentError(index, describe_yaml_error(err, text), _error_line(err, text)) from None


def _documents(text: str | bytes, *, unique_keys: bool, with_nodes: bool = False) -> Iterator[Any]:
    """Each document built, or with `with_nodes` (node, document) pairs."""
    if len(text) > MAX_INPUT_BYTES:
        raise DocumentError(
            0, f"the text is {len(text)} bytes, over the limit of {MAX_INPUT_BYTES} bytes"
        )
    try:
        if _C_PARSER:
            _check_depth_streaming(text)
        loader = _StrictLoader(text)
    except yaml.YAMLError as err:  # the reader checks the first chunk of text at once
        raise DocumentError(0, describe_yaml_error(err, text), _error_line(err, text)) from None
    except MemoryError:
        raise DocumentError(0, _OUT_OF_MEMORY) from None
    index = 0
    try:
        while _next_node_exists(loader, index, text):
            node = _compose(loader, index, text)
            if node is None:  # check_node said there is one: PyYAML never gets here
                break
            try:
                _check_tree(node, index, unique_keys=unique_keys)
                document = _build(loader, node, {})
            except yaml.YAMLError as err:
                raise DocumentError(
                    index, describe_yaml_error(err, text), _error_line(err, text)
                ) from None
            except MemoryError:
                raise DocumentError(index, _OUT_OF_MEMORY) from None
            except DocumentError as problem:
                problem.line = problem.line or node.start_mark.line + 1
                raise
            yield (node, document) if with_nodes else document
            index += 1
    finally:
        loader.dispose()


def _build(loader: _StrictLoader, node: Node, built: dict[int, Any]) -> Any:
    """The data of a checked tree: lists, maps and scalars built directly (PyYAML's generic
    construction costs more than parsing); merge keys and other tags through the loader."""
    if isinstance(node, ScalarNode) and node.tag in _SCALAR_TAGS:
        return loader.yaml_constructors[node.tag](loader, node)
    if id(node) in built:  # an alias: the same object, as PyYAML builds it
        return built[id(node)]
    value: Any
    if node.tag == _SEQ_TAG and isinstance(node, SequenceNode):
        value = [_build(loader, kid, built) for kid in node.value]
    elif (
        node.tag == _MAP_TAG
        and isinstance(node, MappingNode)
        and not any(key.tag == _MERGE_TAG for key, _ in node.value)
    ):
        value = {}
        for key_node, value_node in node.value:
            key = _build(loader, key_node, built)
            if isinstance(key, list | dict):
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                )
            value[key] = _build(loader, value_node, built)
    else:
        value = loader.construct_object(node, deep=True)
    built[id(node)] = value
    return value


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
    except MemoryError:
        raise DocumentError(index, _OUT_OF_MEMORY) from None
    return node


_OUT_OF_MEMORY = "the text is too large to read: out of memory"


def _error_line(err: yaml.YAMLError, text: str | bytes) -> int | None:
    """The 1-based line a PyYAML or libyaml error points at, when it does."""
    if isinstance(err, yaml.reader.ReaderError):  # a position in the text, not a mark
        decoded = err.encoding == "unicode" or _LIBYAML_CONTROL in str(err.reason)
        return _line_of(text, err.position) if decoded else None
    mark = getattr(err, "problem_mark", None)
    return None if mark is None else _mark_line(mark, text)


def _mark_line(mark: Any, text: str | bytes) -> int:
    """The 1-based line of a mark; libyaml puts the end of a text without a final newline on
    the line after it, PyYAML on its last line."""
    newline = b"\n" if isinstance(text, bytes) else "\n"
    return min(int(mark.line) + 1, text.count(newline) + 1)  # type: ignore[arg-type]


def describe_yaml_error(err: yaml.YAMLError, text: str | bytes = "") -> str:
    """A PyYAML or libyaml error as one line: `malformed YAML (line N): problem`."""
    if isinstance(err, yaml.reader.ReaderError):
        if err.encoding != "unicode" and _LIBYAML_CONTROL not in str(err.reason):  # not decoded
            byte = f"byte 0x{err.character:02x}" if err.character >= 0 else "bytes"
            encoding = "UTF-8" if err.encoding in ("?", "utf-8") else err.encoding.upper()
            return f"not {encoding} text ({byte} at offset {err.position})"
        line = _line_of(text, err.position)
        return f"malformed YAML (line {line}): control character {chr(err.character)!r}"
    mark = getattr(err, "problem_mark", None)
    where = f" (line {_mark_line(mark, text)})" if mark is not None else ""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    if problem == _LIBYAML_BAD_TOKEN and mark is not None:  # name the character, as PyYAML does
        problem = f"found character {_character_at(text, mark.line, mark.column)!r} that cannot"
        problem += " start any token"
    return f"malformed YAML{where}: {problem}"


_LIBYAML_BAD_TOKEN = "found character that cannot start any token"
_LIBYAML_CONTROL = "control characters are not allowed"


def _character_at(text: str | bytes, line: int, column: int) -> str:
    lines = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text).split("\n")
    return lines[line][column : column + 1] if line < len(lines) else ""


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

    One pass over the distinct collections (aliases share theirs), computing for each the size
    and the height of the tree it expands to; a node met again while still being measured is
    its own ancestor. Scalars are counted where they are met, without a pass of their own.
    """
    measured: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()
    scalars = 0
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            size, height = _expanded_size_and_height(node, measured)
            if height > MAX_DEPTH:
                raise DocumentError(index, _too_deep_message())
            measured[id(node)] = (size, height)
            open_nodes.discard(id(node))
            continue
        if isinstance(node, ScalarNode) or id(node) in measured:
            continue
        if unique_keys and isinstance(node, MappingNode):
            _check_unique_keys(node, index)
        open_nodes.add(id(node))
        stack.append((node, True))
        for kid in _children(node):
            if isinstance(kid, ScalarNode):
                scalars += 1
            elif id(kid) in open_nodes:
                line = kid.start_mark.line + 1
                raise DocumentError(
                    index,
                    f"malformed YAML (line {line}): an alias refers to a node containing it",
                    line,
                )
            elif id(kid) not in measured:
                stack.append((kid, False))
    expanded = measured[id(root)][0] if id(root) in measured else 1
    if expanded - len(measured) - scalars > MAX_ALIAS_NODES:
        raise DocumentError(
            index,
            f"malformed YAML: aliases expand this document by more than {MAX_ALIAS_NODES} nodes",
        )


def _expanded_size_and_height(node: Node, measured: dict[int, tuple[int, int]]) -> tuple[int, int]:
    size, height = 1, 1
    for kid in _children(node):
        if isinstance(kid, ScalarNode):
            size += 1
            height = max(height, 2)
        else:
            kid_size, kid_height = measured[id(kid)]
            size += kid_size
            height = max(height, kid_height + 1)
    return size, height


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
