"""The per-user cache folder: entries of plain JSON that only this user can have written, looked up by content.

The folder is `$XDG_CACHE_HOME/gpuspec` (else `~/.cache/gpuspec`), created 0700. It is used only if it is a real
folder (not a link) owned by this user that no one else may enter, and each entry only if it is a plain file of
this user's, so nothing another user planted is ever read; every file is opened relative to the folder without
following links, and written to a new file (O_EXCL) that is then renamed over the entry. Entry names are hashes of
everything that shapes the entry, and of the folder's identity: an entry copied in from elsewhere (a cache folder
committed to a repository, a restored CI cache) is never found. The folder is kept under MAX_ENTRIES and MAX_BYTES,
the oldest entries going first. Every problem means a miss: callers then work from the source. GPUSPEC_NO_CACHE=1
turns every cache off: nothing is read from the folder or written to it (nor is it made).

Callers validate what they load: a JSON value is data, never code, but it may still be wrong.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import time

MAX_ENTRIES = 1000
MAX_BYTES = 64 * 1024 * 1024
MAX_ENTRY_BYTES = 16 * 1024 * 1024
TRIM_ONE_IN = 64  # looking over the whole folder costs milliseconds: one store in this many does it
_STALE_PARTIAL_S = 3600  # a temp file this old was left by a writer that died

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted at an entry's name must not block the open
# Without these the checks above cannot be made safely (Windows): no cache there.
_SUPPORTED = bool(_O_NOFOLLOW and _O_DIRECTORY and hasattr(os, "geteuid")
                  and {os.open, os.unlink, os.rename} <= os.supports_dir_fd  # os.replace goes with rename
                  and os.scandir in os.supports_fd)

_stores = [0]  # by this process
NO_CACHE = "GPUSPEC_NO_CACHE"


def enabled() -> bool:
    """False when GPUSPEC_NO_CACHE is set (to anything but the empty string): no cache of any kind is used."""
    return not os.environ.get(NO_CACHE)


def location() -> str | None:
    """Where the folder is (or would be); None without an absolute base (HOME unset gives a literal `~`)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative XDG_CACHE_HOME is ignored
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "gpuspec")


class _Folder:
    """The cache folder, open: its descriptor (every file is opened relative to it) and its identity."""

    def __init__(self, fd: int, identity: str):
        self.fd, self.identity = fd, identity


_opened: dict[str, _Folder] = {}  # location -> the folder as this process opened it


def _open() -> _Folder | None:
    """The folder, if it passes the checks (again at every use: its owner or mode may have changed since)."""
    if not _SUPPORTED or not enabled():
        return None
    path = location()
    if path is None:
        return None
    folder = _opened.get(path)
    if folder is None:
        try:
            try:
                os.mkdir(path, 0o700)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
        except OSError:
            return None
        info = os.fstat(fd)
        folder = _opened[path] = _Folder(fd, f"{info.st_dev}:{info.st_ino}")
    try:
        info = os.fstat(folder.fd)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        return None  # not ours alone: someone else could have written what is in it
    return folder


def key(*parts: str | bytes) -> bytes:
    """Material for an entry's name from `parts` (each unambiguous: lengths are included)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        digest.update(b"%d:" % len(data))
        digest.update(data)
    return digest.digest()


def _name(folder: _Folder, kind: str, material: bytes) -> str:
    digest = hashlib.sha256(folder.identity.encode() + b"\0" + material).hexdigest()
    return f"{kind}-{digest}.json"


def read_entry(kind: str, material: bytes):
    """The JSON value stored under (kind, material), or None when there is none or anything is amiss."""
    folder = _open()
    if folder is None:
        return None
    try:
        fd = os.open(_name(folder, kind, material), os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK,
                     dir_fd=folder.fd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_nlink != 1
                or info.st_size > MAX_ENTRY_BYTES):
            return None
        chunks, size = [], 0
        while size <= info.st_size:
            chunk = os.read(fd, info.st_size + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return json.loads(b"".join(chunks), parse_constant=_refuse)  # never written: NaN, Infinity
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)


def _refuse(constant: str):
    raise ValueError(f"{constant} in a cache entry")


def store(kind: str, material: bytes, value) -> None:
    """Keep `value` (JSON data) under (kind, material); silently nothing if it cannot be done."""
    folder = _open()
    if folder is None:
        return
    try:
        # check_circular=False: a value is data made afresh (a cycle would end in RecursionError, not stored either)
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                          check_circular=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError):
        return
    if len(data) > MAX_ENTRY_BYTES:
        return
    name = _name(folder, kind, material)
    partial = f".{name}.{os.urandom(8).hex()}.tmp"
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600,
                     dir_fd=folder.fd)
    except OSError:
        return
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(partial, name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
    except OSError:  # a full disk, a folder in the way: leave nothing behind
        try:
            os.unlink(partial, dir_fd=folder.fd)
        except OSError:
            pass
        return
    if _trim_due():
        _trim(folder)


def _trim_due() -> bool:
    """Every TRIM_ONE_IN-th store of a process, and one in TRIM_ONE_IN at random (so that many short runs, each
    storing an entry or two, keep the folder in bounds too)."""
    _stores[0] += 1
    return _stores[0] % TRIM_ONE_IN == 0 or os.urandom(1)[0] < 256 // TRIM_ONE_IN


def _trim(folder: _Folder) -> None:
    """Remove temp files dead writers left, then the oldest entries beyond the limits, down to nine tenths of them
    (so that the next trims find nothing to do for a while)."""
    entries, total, now = [], 0, time.time()
    try:
        with os.scandir(folder.fd) as listing:
            for entry in listing:
                info = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(info.st_mode):
                    continue
                if entry.name.endswith(".tmp"):
                    if now - info.st_mtime > _STALE_PARTIAL_S:
                        os.unlink(entry.name, dir_fd=folder.fd)
                    continue
                entries.append((info.st_mtime_ns, entry.name, info.st_size))
                total += info.st_size
        if len(entries) <= MAX_ENTRIES and total <= MAX_BYTES:
            return
        entries.sort()
        keep_entries, keep_bytes = MAX_ENTRIES * 9 // 10, MAX_BYTES * 9 // 10
        for count, (_, name, size) in zip(range(len(entries), 0, -1), entries):
            if count <= keep_entries and total <= keep_bytes:
                break
            os.unlink(name, dir_fd=folder.fd)
            total -= size
    except OSError:
        pass
