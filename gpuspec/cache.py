"""Parsed specs kept between runs: a spec whose text has not changed is not lexed and parsed again.

The cache is a folder of pickles in the user's cache directory (not a shared temporary folder), readable only
by its owner, keyed by a hash of the file's path and text, gpuspec's version and the grammar. GPUSPEC_NO_CACHE=1
turns it off; any problem reading or writing it just means the spec is parsed.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from gpuspec import __version__
from gpuspec.resources import data_dir


def _folder() -> Path | None:
    if os.environ.get("GPUSPEC_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "gpuspec"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        stat = folder.stat()
        if hasattr(os, "getuid") and (stat.st_uid != os.getuid() or stat.st_mode & 0o077):
            return None  # someone else could write there: do not load pickles from it
    except OSError:
        return None
    return folder


_GRAMMAR_HASH: list[str] = []


def _key(path: str, text: str, line_offset: int, offsets) -> str:
    if not _GRAMMAR_HASH:
        # What a parse depends on besides the text: the grammar, and the node classes that are pickled (a
        # development checkout changes them without a new version).
        grammar = (data_dir("grammar") / "gpuspec.lark").read_bytes()
        node_classes = Path(__file__).with_name("nodes.py").read_bytes()
        _GRAMMAR_HASH.append(hashlib.sha256(grammar + b"\0" + node_classes).hexdigest())
    material = "\0".join([__version__, _GRAMMAR_HASH[0], path, str(line_offset), repr(sorted((offsets or {}).items())),
                          text])
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def load(source):
    """The cached parse of `source` (a SpecText), or None."""
    folder = _folder()
    if folder is None:
        return None
    try:
        data = (folder / _key(source.path, source.text, source.line_offset, source.column_offsets)).read_bytes()
        return pickle.loads(data)
    except Exception:  # a missing, stale or damaged entry: parse instead
        return None


def store(source, spec) -> None:
    folder = _folder()
    if folder is None:
        return
    try:
        target = folder / _key(source.path, source.text, source.line_offset, source.column_offsets)
        handle, partial = tempfile.mkstemp(dir=str(folder))
        with os.fdopen(handle, "wb") as out:
            pickle.dump(spec, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, target)
    except Exception:
        return
