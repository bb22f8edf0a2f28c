"""The Jinja environment for harness programs: StrictUndefined, and only checked code may be placed."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import jinja2

from gpuspec import timing
from gpuspec.codegen import Code, UnsafeValue, wrapped
from gpuspec.resources import data_dir

# The line of gpuspec/timing.py a function body cannot hold; Python 3.10 and later read its annotations without it.
_FUTURE = "from __future__ import annotations\n"


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
    env.globals["timing_rules"] = timing_rules()
    return env


@functools.lru_cache(maxsize=1)
def timing_rules() -> Code:
    """gpuspec/timing.py, whole and unchanged, as the body of a function `timing_rules()` that returns its public
    names: every generated program carries the same stopping rules and statistics as gpuspec, and needs neither
    gpuspec nor anything but the standard library to use them (tests/test_standalone_programs.py compares the
    two). The source is gpuspec's own file, never a spec's text."""
    source = Path(timing.__file__).read_text(encoding="utf-8")
    if _FUTURE not in source:
        raise RuntimeError("gpuspec/timing.py no longer starts with its __future__ import; update timing_rules()")
    body = source.replace(_FUTURE, "", 1)
    public = [name for name in _top_level_names(body) if not name.startswith("_")]
    lines = ["def timing_rules():"]
    lines += [("    " + line) if line.strip() else "" for line in body.splitlines()]
    lines.append("    import types")
    lines.append("    " + wrapped("return types.SimpleNamespace(", [f"{n}={n}" for n in public], ")", 4))
    return Code("\n".join(lines) + "\n")


def _top_level_names(source: str) -> list[str]:
    """The names a module's top level defines: functions, classes and assigned names, in order."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names
