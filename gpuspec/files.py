"""Files gpuspec writes and reads back: written so that an interruption never leaves half a file (a temporary
file beside the target, flushed, then renamed over it in one step), and JSON read with errors in words."""
from __future__ import annotations

import errno
import json
import math
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


class AlreadyThere(WriteError):
    """write_new found a file (or a link, even a broken one) at its path, and left it alone."""


def write_new(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) to a new file at `path`, whole or not at all, never replacing anything there (even a
    file made meanwhile: the finished file is linked into place, which fails if the name is taken). AlreadyThere
    if something is at `path`, WriteError if it cannot be written."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(folder))
    except OSError as error:
        raise WriteError(f"cannot write {target}: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(partial, 0o666 & ~_umask())
        os.link(partial, target)
    except FileExistsError:
        raise AlreadyThere(f"{target} already exists; it was left as it is") from None
    except OSError as error:
        raise WriteError(f"cannot write {target}: {error.strerror or error}") from None
    finally:
        Path(partial).unlink(missing_ok=True)


def append(path: str | Path, text: str) -> None:
    """Add `text` (UTF-8) to the end of the file at `path`, made if missing: only ever appended, only to a
    regular file, never through a symbolic link (which could point at a file to spoil). WriteError if not."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    if os.path.islink(path):
        raise WriteError(f"{path} is a symbolic link; nothing was written through it")
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as error:
        raise WriteError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        kind = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(kind):
            raise WriteError(f"{path} is {_kind(kind)}, not a file; nothing was written")
        data = text.encode("utf-8", "surrogateescape")
        while data:
            data = data[os.write(descriptor, data):]
    except OSError as error:
        if isinstance(error, WriteError):
            raise
        raise WriteError(f"cannot write {path}: {error.strerror or error}") from None
    finally:
        os.close(descriptor)


def _umask() -> int:
    current = os.umask(0)  # the only way to read it is to set it; set it straight back
    os.umask(current)
    return current


def json_bytes(data) -> bytes:
    """`data` as readable UTF-8 JSON for a file read_json reads back alike: no NaN or Infinity (ValueError), and
    text that is not Unicode (a path of undecodable bytes, held as surrogates) written as JSON escapes."""
    return (json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8", "backslashreplace")


# The most bytes read_json reads unless told otherwise: far more than any file gpuspec writes, far less than memory.
JSON_LIMIT = 64 << 20
# Digits past which an integer is not a count or a measurement (and Python would refuse to convert it anyway).
_MOST_DIGITS = 400


class BadNumber:
    """A number JSON allows but a finite float cannot hold (NaN, Infinity, 1e999, 400 digits), kept as written so
    that the check of the key it sits under can name it."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text if len(self.text) <= 40 else f"{self.text[:20]}… ({len(self.text):,} characters)"


class RepeatedKeys(dict):
    """A JSON object in which a key appears more than once (JSON keeps the last; a reader sees the first):
    `repeated` names them, for the check of that object to refuse."""

    __slots__ = ("repeated",)


def read_json(path: str | Path, error: type[Exception], limit: int = JSON_LIMIT, what: str = "a JSON file"):
    """The JSON in the file at `path`; `error` (with the file and the reason) if it is not a regular file of at most
    `limit` bytes of UTF-8 JSON (a byte-order mark is allowed). Numbers a float cannot hold come back as BadNumber
    and objects with a key twice as RepeatedKeys, for the caller's check to name with their key."""
    raw = _read_bounded(Path(path), error, limit, what)
    if not raw.strip():
        raise error(f"{path} is empty; {what} holds a JSON object")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as problem:
        line = raw.count(b"\n", 0, problem.start) + 1
        column = problem.start - (raw.rfind(b"\n", 0, problem.start) + 1) + 1
        raise error(f"{path} is not UTF-8 text (line {line}, column {column}: byte "
                    f"0x{raw[problem.start]:02x})") from None
    try:
        return json.loads(text, parse_constant=BadNumber, parse_float=_float, parse_int=_int,
                          object_pairs_hook=_object)
    except json.JSONDecodeError as problem:
        raise error(f"{path} is not JSON (line {problem.lineno}, column {problem.colno}): {problem.msg}") from None
    except RecursionError:
        raise error(f"{path} nests lists or objects too deeply to be {what}") from None


class NotRegular(OSError):
    """What read_regular found at a path is no regular file: `kind` says what it is (a folder, a FIFO, ...)."""

    def __init__(self, kind: str):
        folder = kind == "a folder"
        super().__init__(errno.EISDIR if folder else errno.EINVAL,
                         os.strerror(errno.EISDIR) if folder else "not a regular file (a pipe, a device or a socket)")
        self.kind = kind


def read_regular(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (at most `limit` + 1 of them, where a limit is given, so that the
    caller can tell a file too large). Opened without blocking and looked at before a byte is read: a FIFO planted
    in its place would block the read for ever, and a device (a link to /dev/zero) never end; either is NotRegular,
    as is a folder. OSError if it cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) \
        | getattr(os, "O_BINARY", 0)
    handle = os.open(path, flags)
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular("a folder" if stat.S_ISDIR(mode) else _kind(mode))
        chunks, size = [], 0
        while limit is None or size <= limit:
            chunk = os.read(handle, 1 << 20 if limit is None else min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


def _read_bounded(path: Path, error: type[Exception], limit: int, what: str) -> bytes:
    """At most `limit` bytes of a regular file (read_regular), or `error` in words."""
    try:
        raw = read_regular(path, limit)
    except NotRegular as problem:
        if problem.kind == "a folder":
            raise error(f"cannot read {path}: it is a folder; {what} is a file") from None
        raise error(f"cannot read {path}: it is {problem.kind}, not a regular file") from None
    except OSError as problem:
        raise error(f"cannot read {path}: {problem.strerror or problem}") from None
    if len(raw) > limit:
        raise error(f"{path} is larger than {_size(limit)}, more than {what} holds; it was not read")
    return raw


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count:,} bytes"


def _float(text: str):
    number = float(text)
    return number if math.isfinite(number) else BadNumber(text)


def _int(text: str):
    return int(text) if len(text) <= _MOST_DIGITS else BadNumber(text)


def _object(pairs: list[tuple[str, object]]) -> dict:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    repeated = RepeatedKeys(found)
    seen: set[str] = set()
    repeated.repeated = tuple(dict.fromkeys(key for key, _ in pairs if key in seen or seen.add(key)))
    return repeated
