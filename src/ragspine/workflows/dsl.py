"""Safe loading of Dify DSL exports (YAML or JSON) with size, depth and alias limits.

The loader builds plain Python values (dict, list, str, int, float, bool, None) straight from the
YAML event stream, so limits apply while parsing: a "billion laughs" file fails at the alias that
crosses the expansion budget, before anything large exists. Error messages give line numbers and
field names, never the file's values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from ragspine.errors import ConfigError, WorkflowError, quote_input
from ragspine.workflows.limits import DEFAULT_LIMITS, PreviewLimits

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MIN_VERSION = (0, 1, 0)
MAX_KNOWN_VERSION = (0, 6, 0)
_VERSION_RE = re.compile(r"^(\d{1,4})\.(\d{1,4})\.(\d{1,4})$")

_TAG = "tag:yaml.org,2002:"
_SCALAR_BUILDERS = {
    _TAG + "bool": SafeConstructor.construct_yaml_bool,
    _TAG + "int": SafeConstructor.construct_yaml_int,
    _TAG + "float": SafeConstructor.construct_yaml_float,
}
_COLLECTION_TAGS = {None, "!", _TAG + "seq", _TAG + "map"}


class AppMode(StrEnum):
    """Dify app modes that carry a workflow graph."""

    WORKFLOW = "workflow"
    ADVANCED_CHAT = "advanced-chat"


@dataclass(frozen=True, slots=True)
class DslDocument:
    """A validated Dify export: header fields plus the raw graph lists (not yet projected)."""

    version: str
    mode: AppMode
    app_name: str
    nodes: list[Any]
    edges: list[Any]
    warnings: tuple[str, ...] = ()


def read_source(source: str | bytes | Path, *, limits: PreviewLimits = DEFAULT_LIMITS) -> str:
    """Return the text of ``source``: a path, YAML/JSON ``bytes``, or a ``str``.

    A ``str`` is taken as the document text when it contains a line break or starts with ``{``;
    otherwise it is a file path.
    """
    if isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{")):
        data: bytes | str = source
    elif isinstance(source, bytes | bytearray):
        data = bytes(source)
    elif isinstance(source, str | Path):
        data = _read_file(Path(source), limits)
    else:
        raise ConfigError(
            f"workflow source must be a path, str or bytes, not {type(source).__name__}"
        )
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > limits.max_bytes:
        raise WorkflowError(
            f"workflow export is {size} bytes, over the limit of {limits.max_bytes}: "
            "pass limits=PreviewLimits(max_bytes=...) if the file is trusted"
        )
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WorkflowError(
            f"workflow export is not UTF-8 text (bad byte at offset {exc.start}): "
            "re-export it from Dify"
        ) from None


def _read_file(path: Path, limits: PreviewLimits) -> bytes:
    try:
        size = path.stat().st_size
        if size > limits.max_bytes:
            raise WorkflowError(
                f"workflow export {quote_input(path)} is {size} bytes, "
                f"over the limit of {limits.max_bytes}"
            )
        with path.open("rb") as handle:
            return handle.read(limits.max_bytes + 1)
    except FileNotFoundError:
        raise ConfigError(f"workflow file not found: {quote_input(path)}") from None
    except IsADirectoryError:
        raise ConfigError(f"workflow path is a folder, not a file: {quote_input(path)}") from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read workflow file {quote_input(path)}: {exc.strerror}"
        ) from None


def load_plain(text: str, *, limits: PreviewLimits = DEFAULT_LIMITS) -> Any:
    """Parse YAML or JSON text into plain values, enforcing ``limits``."""
    try:
        if text.lstrip().startswith("{"):
            try:
                return _load_json(text, limits)
            except json.JSONDecodeError:
                pass  # not JSON: a YAML flow mapping, parsed below
        return _PlainBuilder(limits).build(text)
    except ValueError as exc:  # Python's own limit: an integer of over 4,300 digits
        if "digits" not in str(exc):
            raise
        raise WorkflowError(
            "workflow export holds an integer too long to read (over 4,300 digits)"
        ) from None


def load_dsl(source: str | bytes | Path, *, limits: PreviewLimits = DEFAULT_LIMITS) -> DslDocument:
    """Load and validate a Dify ``kind: app`` export with a workflow graph."""
    return validate_header(load_plain(read_source(source, limits=limits), limits=limits))


def validate_header(doc: Any) -> DslDocument:
    """Check kind, version and app mode; return the document with its raw graph lists."""
    if not isinstance(doc, dict):
        raise WorkflowError("workflow export is not a mapping: expected a Dify DSL export")
    if doc.get("kind") != "app":
        raise WorkflowError(
            "workflow export must declare kind 'app' (a Dify app export); "
            "this file declares another kind or none"
        )
    version, warnings = _check_version(doc.get("version"))
    app = doc.get("app")
    if not isinstance(app, dict):
        raise WorkflowError("workflow export has no 'app' mapping: re-export the app from Dify")
    mode_raw = app.get("mode")
    valid = ", ".join(mode.value for mode in AppMode)
    if not isinstance(mode_raw, str) or mode_raw not in set(AppMode):
        raise WorkflowError(
            f"app.mode must be one of {valid}; other Dify app modes have no workflow graph"
        )
    name = app.get("name", "")
    if isinstance(name, dict | list):
        raise WorkflowError("app.name must be text")
    workflow = doc.get("workflow")
    graph = workflow.get("graph") if isinstance(workflow, dict) else None
    if not isinstance(graph, dict):
        raise WorkflowError("workflow export has no workflow.graph mapping")
    nodes = graph.get("nodes", [])
    edges = graph.get("edges", [])
    if not isinstance(nodes, list) or not isinstance(edges, list):
        raise WorkflowError("workflow.graph.nodes and workflow.graph.edges must be lists")
    return DslDocument(
        version=version,
        mode=AppMode(mode_raw),
        app_name="" if name is None else str(name),
        nodes=nodes,
        edges=edges,
        warnings=warnings,
    )


def _check_version(raw: Any) -> tuple[str, tuple[str, ...]]:
    if raw is None:
        raise WorkflowError("workflow export has no 'version' field: re-export it from Dify")
    if not isinstance(raw, str):
        raise WorkflowError(
            "workflow export 'version' must be a string such as '0.3.1' "
            f"(found a {type(raw).__name__}): quote it in the file"
        )
    match = _VERSION_RE.match(raw)
    if match is None:
        raise WorkflowError("workflow export 'version' is not of the form MAJOR.MINOR.PATCH")
    parsed = tuple(int(part) for part in match.groups())
    if parsed < MIN_VERSION:
        raise WorkflowError("workflow export DSL version is older than 0.1.0, which is unsupported")
    if parsed > MAX_KNOWN_VERSION:
        return raw, (
            f"DSL version {raw} is newer than 0.6.0, the newest this preview knows; "
            "nodes and edges are shown but new fields are ignored",
        )
    return raw, ()


class _Frame:
    """A mapping or sequence under construction."""

    __slots__ = ("anchor", "container", "key", "line", "size")

    def __init__(self, container: dict[Any, Any] | list[Any], anchor: str | None, line: int):
        self.container = container
        self.anchor = anchor
        self.line = line
        self.size = 1
        self.key: Any = _NO_KEY


_NO_KEY = object()


class _PlainBuilder:
    """Builds plain values from YAML events, enforcing limits as it goes."""

    def __init__(self, limits: PreviewLimits) -> None:
        self.limits = limits
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.aliases = 0
        self.expansion = 0
        self.stack: list[_Frame] = []
        self.roots: list[Any] = []
        self.resolver = Resolver()
        self.constructor = SafeConstructor()

    def build(self, text: str) -> Any:
        try:
            for event in self._events(text):
                self._handle(event)
        except yaml.MarkedYAMLError as exc:
            line = exc.problem_mark.line + 1 if exc.problem_mark else 0
            raise WorkflowError(
                f"workflow export is not valid YAML near line {line}: {exc.problem}"
            ) from None
        except yaml.YAMLError:
            raise WorkflowError("workflow export is not valid YAML") from None
        if len(self.roots) != 1:
            raise WorkflowError("workflow export must hold exactly one YAML document")
        return self.roots[0]

    @staticmethod
    def _events(text: str) -> Iterator[yaml.Event]:
        loader = _Loader(text)
        try:
            while loader.check_event():
                yield loader.get_event()
        finally:
            loader.dispose()

    def _handle(self, event: yaml.Event) -> None:
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, yaml.ScalarEvent):
            self._add(self._scalar(event, line), 1, event.anchor, line)
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            if event.tag not in _COLLECTION_TAGS:
                raise WorkflowError(f"unsupported YAML tag at line {line}: only plain data is read")
            if len(self.stack) >= self.limits.max_depth:
                raise WorkflowError(
                    f"workflow export nests deeper than {self.limits.max_depth} levels "
                    f"(line {line})"
                )
            is_map = isinstance(event, yaml.MappingStartEvent)
            self.stack.append(_Frame({} if is_map else [], event.anchor, line))
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            frame = self.stack.pop()
            self._add(frame.container, frame.size, frame.anchor, frame.line)
        elif isinstance(event, yaml.AliasEvent):
            self._alias(event, line)

    def _alias(self, event: yaml.AliasEvent, line: int) -> None:
        self.aliases += 1
        if self.aliases > self.limits.max_aliases:
            raise WorkflowError(
                f"workflow export uses more than {self.limits.max_aliases} YAML aliases "
                f"(line {line}); Dify exports use none"
            )
        if event.anchor not in self.anchors:
            raise WorkflowError(f"YAML alias at line {line} refers to no earlier anchor")
        value, size = self.anchors[event.anchor]
        self.expansion += size
        if self.expansion > self.limits.max_alias_expansion:
            raise WorkflowError(
                f"YAML aliases expand to more than {self.limits.max_alias_expansion} values "
                f"(line {line}): refusing an alias bomb ('billion laughs')"
            )
        self._add(value, size, None, line)

    def _scalar(self, event: yaml.ScalarEvent, line: int) -> Any:
        value = event.value
        if len(value) > self.limits.max_scalar_chars:
            raise WorkflowError(
                f"a string at line {line} is longer than {self.limits.max_scalar_chars} characters"
            )
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(ScalarNode, value, event.implicit)
        if tag == _TAG + "str" or tag == _TAG + "timestamp":
            return value
        if tag == _TAG + "null":
            return None
        if tag == _TAG + "merge":
            raise WorkflowError(f"YAML merge keys ('<<') are not supported (line {line})")
        builder = _SCALAR_BUILDERS.get(tag)
        if builder is None:
            raise WorkflowError(f"unsupported YAML tag at line {line}: only plain data is read")
        return builder(self.constructor, ScalarNode(tag, value))

    def _add(self, value: Any, size: int, anchor: str | None, line: int) -> None:
        if anchor is not None:
            self.anchors[anchor] = (value, size)
        if not self.stack:
            self.roots.append(value)
            return
        frame = self.stack[-1]
        frame.size += size
        container = frame.container
        if isinstance(container, list):
            container.append(value)
        elif frame.key is _NO_KEY:
            if isinstance(value, dict | list):
                raise WorkflowError(f"complex mapping key at line {line}: keys must be plain")
            if value in container:
                raise WorkflowError(f"duplicate mapping key at line {line}: keys must be unique")
            frame.key = value
        else:
            container[frame.key] = value
            frame.key = _NO_KEY


def _load_json(text: str, limits: PreviewLimits) -> Any:
    """Parse JSON strictly; raises ``json.JSONDecodeError`` for text that is not JSON."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in items:
            if key in result:
                raise WorkflowError("duplicate key in a JSON object: keys must be unique")
            result[key] = value
        return result

    def constant(_: str) -> Any:
        raise WorkflowError("JSON NaN and Infinity are not allowed in a workflow export")

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except RecursionError:
        raise WorkflowError(
            f"workflow export nests deeper than {limits.max_depth} levels"
        ) from None
    _check_json_tree(value, limits)
    return value


def _check_json_tree(root: Any, limits: PreviewLimits) -> None:
    pending: list[tuple[Any, int]] = [(root, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict | list):
            if depth > limits.max_depth:
                raise WorkflowError(f"workflow export nests deeper than {limits.max_depth} levels")
            children = value.values() if isinstance(value, dict) else value
            pending.extend((child, depth + 1) for child in children)
        elif isinstance(value, str) and len(value) > limits.max_scalar_chars:
            raise WorkflowError(f"a string is longer than {limits.max_scalar_chars} characters")
