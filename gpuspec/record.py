"""`record`: how gpuspec declares its data types: frozen attrs classes without generated eq and repr.

attrs writes each generated method at import time, and that is most of gpuspec's start-up; records are
compared by identity, and share one repr. Every data type of the package is declared this way (`@record` on a
`Record` or `ValueRecord` subclass), with one exception: `timing.py` travels inside every generated program,
which may run where only the standard library, torch and triton are installed, so its records are frozen
dataclasses.
"""
from __future__ import annotations

import operator
from collections.abc import Callable

import attrs

record = attrs.frozen(eq=False, repr=False)


class Record:
    """Base class of records: a repr built from the attrs fields (those with repr=True)."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = (f"{a.name}={getattr(self, a.name)!r}" for a in attrs.fields(type(self)) if a.repr)
        return f"{type(self).__name__}({', '.join(shown)})"


class ValueRecord(Record):
    """Base class of records compared and hashed by value: by the fields that take part in equality (not those
    declared with eq=False). Written once here rather than generated per class by attrs, for start-up time."""

    __slots__ = ("_hash",)

    def _values(self) -> tuple:
        values = _EQ_FIELDS.get(type(self))
        if values is None:
            values = _EQ_FIELDS[type(self)] = _getter(tuple(a.name for a in attrs.fields(type(self)) if a.eq))
        return values(self)

    def __eq__(self, other) -> bool:
        return self is other or (type(other) is type(self) and self._values() == other._values())

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:  # computed once: a workload is hashed for every claim that uses it
            found = hash((type(self).__name__, self._values()))
            object.__setattr__(self, "_hash", found)
            return found


_EQ_FIELDS: dict[type, Callable[[object], tuple]] = {}  # a class -> the values of its fields that take part in eq


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple]:
    """A function from an object to the tuple of its attributes `names` (one C call, where a generator of getattr
    calls was most of a comparison's time)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda value: (one(value),)
    return lambda value: ()


def as_tuple(items) -> tuple:
    """The converter for tuple fields. A Python function, not the builtin `tuple`: attrs reads a converter's
    signature at import, and for a builtin that means tokenizing its text signature, ~1.5 ms a field."""
    return tuple(items)
