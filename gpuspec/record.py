"""`record`: how gpuspec declares its data types: frozen attrs classes without generated eq and repr.

attrs writes each generated method at import time, and that is most of gpuspec's start-up; records are
compared by identity, and share one repr.
"""
from __future__ import annotations

import attrs

record = attrs.frozen(eq=False, repr=False)


class Record:
    """Base class of records: a repr built from the attrs fields (those with repr=True)."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = (f"{a.name}={getattr(self, a.name)!r}" for a in attrs.fields(type(self)) if a.repr)
        return f"{type(self).__name__}({', '.join(shown)})"


def as_tuple(items) -> tuple:
    """The converter for tuple fields. A Python function, not the builtin `tuple`: attrs reads a converter's
    signature at import, and for a builtin that means tokenizing its text signature, ~1.5 ms a field."""
    return tuple(items)
