"""Files gpuspec writes and reads back: written so that an interruption never leaves half a file (a temporary
file beside the target, flushed, then renamed over it in one step), and JSON read with errors in words."""
from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path


class WriteError(OSError):
    """A file could not be written; the message says which and why. The original is unchanged."""


def write_atomically(path: str | Path, text: str | bytes) -> None:
    """Replace the file at `path` with `text` (UTF-8; bytes as they are), keeping its permissions. WriteError
    if that fails."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    mode = None
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
        if target.exists() and not os.access(target, os.W_OK):
            raise WriteError(f"{target} is read-only; it was not changed")
        handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(folder))
    except WriteError:
        raise
    except OSError as error:
        unchanged = "; it was not changed" if mode is not None else ""
        raise WriteError(f"cannot write {target}: {error.strerror or error}{unchanged}") from None
    try:
        binary = isinstance(text, bytes)
        with (os.fdopen(handle, "wb") if binary else os.fdopen(handle, "w", encoding="utf-8", newline="")) as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp makes the file private (0600); a replaced file keeps its mode, a new one gets the umask's.
        os.chmod(partial, mode if mode is not None else 0o666 & ~_umask())
        os.replace(partial, target)
    except BaseException as error:
        Path(partial).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise WriteError(f"cannot write {target}: {error.strerror or error}; it was not changed") from None
        raise


def _umask() -> int:
    current = os.umask(0)  # the only way to read it is to set it; set it straight back
    os.umask(current)
    return current


def read_json(path: str | Path, error: type[Exception]):
    """The JSON in the file at `path`; `error` (with the file and the reason) if it cannot be read or parsed."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"cannot read {path}: {problem}") from None
    except json.JSONDecodeError as problem:
        raise error(f"{path} is not JSON (line {problem.lineno}, column {problem.colno}): {problem.msg}") from None
