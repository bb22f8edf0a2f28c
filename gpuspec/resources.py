"""The data files that ship with gpuspec: where grammar/, templates/ and catalog/ are, and reading catalogs."""
from __future__ import annotations

import functools
import marshal
import os
import tempfile
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The folder `name`: inside the installed package, or at the top of a source checkout."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gpuspec's {name}/ folder is missing from {_PACKAGE}")


@functools.lru_cache(maxsize=None)
def catalog_data(name: str) -> dict:
    """catalog/NAME.toml as a dict, through a cache in the temp folder keyed by the file's size and time.

    Parsing TOML costs more than everything else `gpuspec check` does at start-up, so it is done once.
    """
    path = data_dir("catalog") / f"{name}.toml"
    stat = path.stat()
    user = os.getuid() if hasattr(os, "getuid") else "user"
    cache = Path(tempfile.gettempdir()) / f"gpuspec-{user}-{name}-{stat.st_size}-{stat.st_mtime_ns}.marshal"
    try:
        data = marshal.loads(cache.read_bytes())
        if isinstance(data, dict):
            return data
    except (OSError, EOFError, ValueError, TypeError):
        pass
    import tomllib

    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    try:  # write, then rename: a reader never sees half a file
        partial = cache.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(marshal.dumps(data))
        os.replace(partial, cache)
    except OSError:
        pass
    return data
