"""The Jinja environment for harness programs: StrictUndefined, and only checked code may be placed."""
from __future__ import annotations

import functools

import jinja2

from gpuspec.codegen import Code, UnsafeValue
from gpuspec.resources import data_dir


def _code(value) -> str:
    """The filter every placed value goes through: Code from gpuspec.codegen, booleans, or nothing else."""
    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined: raises UndefinedError naming what is missing
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, Code):
        return str(value)
    raise UnsafeValue(f"{value!r} was not built by gpuspec.codegen and cannot be placed in a program")


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        undefined=jinja2.StrictUndefined,  # a missing value is an error, never an empty string
        autoescape=False,  # this is Python, not HTML: escaping is the job of gpuspec.codegen
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_code,  # every {{ expression }} passes through the checker
    )
    return env
