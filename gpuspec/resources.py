"""The data files that ship with gpuspec: where grammar/, templates/ and catalog/ are, and reading catalogs."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

from gpuspec import cachedir
from gpuspec.version import __version__

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The folder `name`: inside the installed package, or at the top of a source checkout."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gpuspec's {name}/ folder is missing from {_PACKAGE}")


@functools.lru_cache(maxsize=None)
def catalog_data(name: str) -> dict:
    """catalog/NAME.toml as a dict.

    Parsing TOML costs more than everything else `gpuspec check` does at start-up, so the result is kept as JSON in
    the per-user cache folder, found by a hash of the file's text (and of the Python that parsed it and this code).
    What is read back must be the tables, strings, numbers and booleans TOML gives, or the file is parsed again.
    """
    path = data_dir("catalog") / f"{name}.toml"
    text = path.read_bytes()
    material = cachedir.key(__version__, sys.version, Path(__file__).read_bytes(), name, text)
    data = cachedir.read_entry("catalog", material)
    if isinstance(data, dict) and _plain(data):
        return data
    import tomllib

    data = tomllib.loads(text.decode("utf-8"))
    cachedir.store("catalog", material, data)  # nothing when it holds what JSON cannot (dates)
    return data


_LEAVES = frozenset((str, int, float, bool))


def _plain(value, depth: int = 0) -> bool:
    """Whether `value` is made only of what TOML parses to (no JSON null), and not absurdly deep."""
    if value.__class__ is dict:
        if not all(key.__class__ is str for key in value):
            return False
        value = value.values()
    elif value.__class__ is not list:
        return value.__class__ in _LEAVES
    if depth >= 32:
        return False
    # Most items are leaves: looked at here, without a call each.
    return all(item.__class__ in _LEAVES or _plain(item, depth + 1) for item in value)
