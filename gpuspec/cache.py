"""Parsed specs kept between runs: a spec whose text has not changed is not lexed and parsed again.

Entries live in the per-user cache folder (cachedir) as plain JSON: each node is a list of its class's name and its
fields, each span the six numbers after its file. An entry is found by a hash of the spec's path and text and of
everything that shapes its nodes (gpuspec's version, the grammar, the installed Lark, the code of parse.py and of
the modules it builds nodes with, and this module's), and it is checked field by field against the node classes as
it is read back: only those classes, each field of its declared type. Anything else, and any problem reading or
writing, just means the spec is parsed. GPUSPEC_NO_CACHE=1 turns it off, with every other cache (cachedir).
"""
from __future__ import annotations

import builtins
import operator
import types
import typing
from pathlib import Path

import attrs

from gpuspec import cachedir, nodes
from gpuspec.version import __version__
from gpuspec.resources import data_dir
from gpuspec.text import Span, span

_KIND = "spec"
# The code a parse's nodes depend on besides the text: parse.py and what it builds nodes from (a development
# checkout changes these without a new version), and this module's encoding. The parser tables are made from the
# grammar by the installed Lark, and both are in the key.
_CODE = ("parse.py", "nodes.py", "text.py", "files.py", "record.py", "diagnostics.py", "resources.py",
         "cache.py", "version.py")


class _Invalid(Exception):
    """An entry that does not decode to nodes of the declared types."""


def _enabled() -> bool:
    return cachedir.enabled()


def code_paths() -> list[Path]:
    """The files whose content is part of every entry's key: the grammar, the code above, and the installed Lark
    (its __init__.py names its version; found without importing it)."""
    import importlib.util

    package = Path(__file__).parent
    paths = [data_dir("grammar") / "gpuspec.lark", *(package / name for name in _CODE)]
    lark = importlib.util.find_spec("lark")
    if lark is not None and lark.origin:
        paths.append(Path(lark.origin))
    return paths


_CODE_KEY: list[bytes] = []


def _code_key() -> bytes:
    if not _CODE_KEY:
        _CODE_KEY.append(cachedir.key(__version__, *(path.read_bytes() for path in code_paths())))
    return _CODE_KEY[0]


def _key(source) -> bytes:
    offsets = repr(sorted((source.column_offsets or {}).items()))
    return cachedir.key(_code_key(), source.path, str(source.line_offset), offsets, source.text)


def lookup(source) -> nodes.Spec | None:
    """The cached parse of `source` (a SpecText), or None."""
    if not _enabled():
        return None
    try:
        value = cachedir.read_entry(_KIND, _key(source))
        if value is None:
            return None
        spec = _decoder(nodes.Spec)(value, source.path)
        return spec if spec.path == source.path else None
    except Exception:  # not what this code writes, or unreadable: parse instead
        return None


def store(source, spec: nodes.Spec) -> None:
    if not _enabled():
        return
    try:
        value = _encode(spec, spec.path)
        cachedir.store(_KIND, _key(source), value)
    except Exception:  # a spec the cache cannot hold is parsed again next time
        return


# --- nodes <-> JSON ----------------------------------------------------------------------------------------------


def _encode(value, path: str):
    kind = value.__class__
    if value is None or kind in _PLAIN:
        return value
    if kind is tuple:
        return [item if item is None or item.__class__ in _PLAIN else _encode(item, path) for item in value]
    if kind is Span:
        if value.file != path:
            raise _Invalid("a span in another file")
        return [value.line, value.column, value.end_line, value.end_column, value.start, value.end]
    fields = _FIELDS.get(kind)
    if fields is None:
        if _NODE_CLASSES.get(kind.__name__) is not kind:
            raise _Invalid(f"{kind.__name__} is not a node class")
        names = [field.name for field in attrs.fields(kind)]
        getter = operator.attrgetter(*names)
        fields = _FIELDS[kind] = (lambda node: (getter(node),)) if len(names) == 1 else getter
    return [kind.__name__, *[item if item is None or item.__class__ in _PLAIN else _encode(item, path)
                             for item in fields(value)]]


_PLAIN = frozenset((str, int, bool))
_FIELDS: dict = {}  # each node class -> its fields' values, in order, as a tuple

_NODE_CLASSES = {name: cls for name, cls in vars(nodes).items()
                 if isinstance(cls, type) and cls.__module__ == nodes.__name__ and attrs.has(cls)}
_DECODERS: dict = {}
_SPAN_FIELDS = (int,) * 6


def _decoder(tp):
    """A function (value, path) -> the value as type `tp`, raising _Invalid for anything else. Built from the node
    classes' annotations, once per type."""
    found = _DECODERS.get(tp)
    if found is None:
        found = _DECODERS[tp] = _build(tp)
    return found


_RESOLVED: dict[str, object] = {}


def _resolve(tp):
    """An annotation (nodes.py writes them as text) as a type: a name is looked up, anything else read by typing."""
    while isinstance(tp, str):
        found = _RESOLVED.get(tp)
        if found is None:
            if tp.isidentifier():
                found = getattr(nodes, tp, None) or getattr(builtins, tp, None)
                if found is None:
                    raise TypeError(f"nodes.py's annotation {tp!r} names nothing")
            else:
                # an annotation in nodes.py's own source, never data: typing evaluates it in nodes' namespace
                holder = type("Annotation", (), {"__annotations__": {"field": tp}})
                found = typing.get_type_hints(holder, vars(nodes))["field"]
            _RESOLVED[tp] = found
        tp = found
    return tp


def _span(value, path):
    # Spans are the most numerous thing in an entry: checked in one step.
    if value.__class__ is not list or len(value) != 6 or tuple(map(type, value)) != _SPAN_FIELDS:
        raise _Invalid("expected a span")
    return span(path, *value)


def _build(tp):
    tp = _resolve(tp)
    if tp in (str, int, bool):
        def primitive(value, path):
            if value.__class__ is not tp:
                raise _Invalid(f"expected {tp.__name__}")
            return value
        return primitive
    if tp is type(None):
        def none(value, path):
            if value is not None:
                raise _Invalid("expected null")
        return none
    if tp is Span:
        return _span
    origin, args = typing.get_origin(tp), [_resolve(a) for a in typing.get_args(tp)]
    if origin in (typing.Union, types.UnionType):
        return _union(args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])

            def items(value, path):
                if value.__class__ is not list:
                    raise _Invalid("expected a list")
                return tuple([item(v, path) for v in value])
            return items
        parts = [_decoder(a) for a in args]

        def fixed(value, path):
            if value.__class__ is not list or len(value) != len(parts):
                raise _Invalid(f"expected {len(parts)} items")
            return tuple([part(v, path) for part, v in zip(parts, value)])
        return fixed
    if isinstance(tp, type) and _NODE_CLASSES.get(tp.__name__) is tp:
        return _union([tp])
    raise TypeError(f"the parse cache cannot store a field of type {tp!r}")


def _union(alternatives):
    """Nodes of the given classes, or None where it is one of them; a node is [class name, field, ...]."""
    nullable = type(None) in alternatives
    classes = [a for a in alternatives if a is not type(None)]
    if len(classes) == 1 and _NODE_CLASSES.get(getattr(classes[0], "__name__", None)) is not classes[0]:
        inner = _decoder(classes[0])  # `str | None` and the like

        def optional(value, path):
            return None if value is None and nullable else inner(value, path)
        return optional
    for cls in classes:
        if _NODE_CLASSES.get(getattr(cls, "__name__", None)) is not cls:
            raise TypeError(f"the parse cache cannot store a field of type {cls!r}")
    allowed = {cls.__name__ for cls in classes}
    if len(allowed) == 1 and not nullable:
        return _MAKERS[classes[0].__name__]  # it checks the class name itself

    def node(value, path):
        if value is None and nullable:
            return None
        try:
            if value[0] in allowed:
                return _MAKERS[value[0]](value, path)
        except (TypeError, IndexError, KeyError):  # not a list, empty, or its first item unhashable
            pass
        raise _Invalid("expected a node of " + ", ".join(sorted(allowed)))
    return node


class _Makers(dict):
    """Class name -> a function that decodes a node of that class: [name, field, ...] -> the node."""

    def __missing__(self, name: str):
        self[name] = _make_node(_NODE_CLASSES[name])
        return self[name]


def _make_node(cls):
    """The decoder of one node class. Fields of a plain type (str, int, bool) are checked together, in one step;
    the others, and the span (the one keyword-only field, last), each by its own decoder."""
    name, fields = cls.__name__, attrs.fields(cls)
    keywords = [field.name for field in fields if field.kw_only]
    if keywords not in ([], ["span"]) or (keywords and fields[-1].name != "span"):
        raise TypeError(f"{name}: the parse cache expects a keyword-only span as the last field, if any")
    positional = fields[:-1] if keywords else fields
    kinds = [_resolve(field.type) for field in positional]
    plain = [i + 1 for i, kind in enumerate(kinds) if kind in (str, int, bool)]
    plain_types = tuple(kinds[i - 1] for i in plain)
    picked = _plain_items(plain)
    nested = [(i + 1, _decoder(kind)) for i, kind in enumerate(kinds) if kind not in (str, int, bool)]
    span = _decoder(fields[-1].type) if keywords else None
    width = len(fields) + 1

    def make(value, path):
        if value.__class__ is not list or len(value) != width or value[0] != name:
            raise _Invalid(f"expected a {name} node")
        if tuple(map(type, picked(value))) != plain_types:
            raise _Invalid(f"a field of {name} of the wrong type")
        items = value[1:len(positional) + 1]
        for i, decode in nested:
            items[i - 1] = decode(value[i], path)
        try:
            return cls(*items, span=span(value[-1], path)) if span else cls(*items)
        except (TypeError, ValueError) as error:
            raise _Invalid(str(error)) from None
    return make


def _plain_items(indexes: list[int]):
    """A function that picks the items at `indexes` of a list, as a tuple."""
    if not indexes:
        return lambda value: ()
    if len(indexes) == 1:
        index = indexes[0]
        return lambda value: (value[index],)
    return operator.itemgetter(*indexes)


_MAKERS = _Makers()
