"""Writing files so that an interruption never leaves half a file: write a temporary file beside the target,
flush it to disk, then rename it over the target in one step."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class WriteError(OSError):
    """A file could not be written; the message says which and why. The original is unchanged."""


def write_atomically(path: str | Path, text: str) -> None:
    """Replace the file at `path` with `text` (UTF-8), keeping its permissions. WriteError if that fails."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
        if target.exists() and not os.access(target, os.W_OK):
            raise WriteError(f"{target} is read-only; it was not changed")
        handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(folder))
    except WriteError:
        raise
    except OSError as error:
        raise WriteError(f"cannot write {target}: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(partial, mode)
        os.replace(partial, target)
    except BaseException as error:
        Path(partial).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise WriteError(f"cannot write {target}: {error.strerror or error}; it was not changed") from None
        raise
