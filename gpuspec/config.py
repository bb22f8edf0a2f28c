"""`[tool.gpuspec]` in pyproject.toml: the project's defaults for `gpuspec check`, found as ruff and pytest find
theirs (the nearest pyproject.toml from the current folder up that holds the table), every key checked.

A key that is not one of KEYS, a value of the wrong type or an unknown device is an error naming the key, the file,
its line and column and what would be right; so is TOML that does not parse, or a file that is not UTF-8. Paths in
the table are relative to the folder of the pyproject.toml that holds it. The command line overrides each key.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from attrs import field

from gpuspec.api import Search
from gpuspec.diagnostics import Diagnostic, SpecError, did_you_mean
from gpuspec.program import Defaults
from gpuspec.record import Record, as_tuple, record
from gpuspec.text import Span

FILE = "pyproject.toml"
FORMATS = ("text", "json", "junit", "markdown", "github")
# Each key, the type it takes in words, and what it means (README's table says the same).
KEYS = {
    "paths": "a list of paths: what `gpuspec check` checks when given none (default: the current folder)",
    "markdown": "true, false or a list of glob patterns: which of folders' Markdown files are searched for gpu "
                "blocks (true: all, the default; [\"docs/**/*.md\"]: those the patterns match)",
    "exclude": "a list of glob patterns: files and folders skipped when searching folders",
    "tolerance": "a string such as \"5%\" or \"2 µs\": the tolerance of ≈ claims in specs that set none",
    "device": "a string: the catalog device of workloads in specs that name none",
    "sources": "a list of sources, such as [\"model\", \"measured\"]: what claims are checked against in specs "
               "without `set sources` (model, calibrated, measured; default: the model and each source given)",
    "profile": "a string: the calibration profile (the calibrated source)",
    "results": "a list of paths: results files (the measured source)",
    "format": f"one of {', '.join(FORMATS)}: the output format of `gpuspec check`",
}
_TOO_BIG = 1 << 20  # a pyproject.toml larger than this is not one


@record
class Config(Record):
    """The settings of `[tool.gpuspec]` (paths made relative to the current folder), or the defaults when no
    pyproject.toml holds the table (`file` is then None)."""

    file: str | None = None
    paths: tuple[str, ...] = field(default=(), converter=as_tuple)
    search: Search = Search()
    defaults: Defaults = Defaults()
    device: str | None = None
    profile: str | None = None
    results: tuple[str, ...] = field(default=(), converter=as_tuple)
    format: str | None = None
    keys: frozenset[str] = frozenset()  # the keys the table sets (a tool whose default differs asks: pytest)
    # Where the profile and each results file were named in the table: (path, place, words), for their errors
    placed: tuple[tuple[str, Span, str], ...] = field(default=(), converter=as_tuple)

    def under(self, paths=(), format: str | None = None, profile: str | None = None, results=(),
              markdown: bool | Sequence[str] | None = None, exclude=None, tolerance: str | None = None,
              sources: Sequence[str] | None = None, device: str | None = None,
              named: Callable[[str], str] = lambda key: f"--{key}") -> Config:
        """This configuration under what a command gave (the command line, pytest's options and ini settings, the
        Python API's arguments), which wins wherever it is given: the one rule the CLI, the pytest plugin and the
        Python API keep. `markdown` is True (every Markdown file), False (none) or glob patterns; `exclude` and
        `markdown` patterns given here are relative to the current folder. A tolerance, source, device or glob
        that is wrong raises SpecError, each problem said of the option as `named(key)` names it (`--tolerance`)."""
        found, problems = self.applied(paths, format, profile, results, markdown, exclude, tolerance, sources,
                                       device, named)
        if problems:
            raise SpecError(problems)
        return found

    def applied(self, paths=(), format: str | None = None, profile: str | None = None, results=(),
                markdown: bool | Sequence[str] | None = None, exclude=None, tolerance: str | None = None,
                sources: Sequence[str] | None = None, device: str | None = None,
                named: Callable[[str], str] = lambda key: f"--{key}") -> tuple[Config, list[Diagnostic]]:
        """`under`, without raising: the configuration with every argument that is right laid over the table
        (where one is wrong, the table's own setting is kept), and the problems with the others."""
        import attrs

        from gpuspec.api import glob_problem

        problems: list[Diagnostic] = []

        def globs(key: str, given):
            wrong = [(pattern, glob_problem(pattern)) for pattern in given]
            wrong = [(pattern, problem) for pattern, problem in wrong if problem is not None]
            for pattern, problem in wrong:
                problems.append(Diagnostic("bad-glob", f"{named(key)}: `{pattern}` is not a glob pattern: {problem}",
                                           None, "a pattern is a shell glob: `*` any characters, `?` one, `[abc]` "
                                                 "one of a set"))
            return not wrong

        search = self.search
        if markdown is True or markdown is False:
            search = attrs.evolve(search, markdown=markdown, markdown_globs=(), markdown_root=".")
        elif markdown is not None and globs("markdown", markdown):
            search = attrs.evolve(search, markdown=True, markdown_globs=tuple(markdown), markdown_root=".")
        if exclude is not None and globs("exclude", exclude):  # the command's own globs, relative to where it runs
            search = attrs.evolve(search, exclude=tuple(exclude), root=".", exclude_from=named("exclude"),
                                  exclude_at=None)
        if paths:  # the command's own paths: none was written in the table
            search = attrs.evolve(search, placed=())
        defaults = self.defaults
        if device is not None or tolerance is not None:
            from gpuspec.resolve.defaults import defaults as checked

            found, wrong = checked(device, tolerance, tolerance_origin=named("tolerance"))
            problems += [attrs.evolve(p, message=f"{named('device' if p.code == 'unknown-device' else 'tolerance')}"
                                      f": {p.message}") for p in wrong]
            if device is not None and found.device is not None:
                defaults = attrs.evolve(defaults, device=found.device)
            else:
                device = None  # wrong: the table's device stands
            if tolerance is not None and found.tolerance is not None:
                defaults = attrs.evolve(defaults, tolerance=found.tolerance)
        if sources is not None:
            chosen, wrong_source = checked_sources(sources)
            if wrong_source is not None:
                problems.append(Diagnostic("bad-setting", f"{named('sources')}: {wrong_source[0]}", None,
                                           wrong_source[1]))
            else:
                defaults = attrs.evolve(defaults, sources=chosen)
        placed = tuple((path, place, words) for path, place, words in self.placed
                       if (path == self.profile and not profile) or (path in self.results and not results))
        return attrs.evolve(self, paths=tuple(paths) or self.paths, format=format or self.format,
                            profile=profile or self.profile, results=tuple(results) or self.results, search=search,
                            defaults=defaults, device=device if device is not None else self.device,
                            placed=placed), problems


def checked_sources(names: Sequence[str]) -> tuple[tuple[str, ...] | None, tuple[str, str] | None]:
    """Source names as `set sources` takes them (`model`, `calibrated`, `measured`, each once; a name may hold
    several, separated by commas: `model,measured`), or None and (what is wrong, what would be right)."""
    from gpuspec.program import SOURCES

    words = [word.strip() for name in names for word in str(name).split(",")]
    words = [word for word in words if word]
    if not words:
        return None, ("names no source", f"name one or more of {', '.join(SOURCES)}")
    for word in words:
        if word not in SOURCES:
            return None, (f"`{word}` is not a source", did_you_mean(word, SOURCES) or f"the sources are "
                                                                                      f"{', '.join(SOURCES)}")
    return tuple(dict.fromkeys(words)), None


def load(start: str | Path = ".") -> Config:
    """The configuration that applies in `start`: that of the nearest pyproject.toml at or above it that holds a
    `[tool.gpuspec]` table (a file that mentions gpuspec but does not parse counts: its error is worth seeing), or
    the defaults. Raises SpecError, every problem located, when it is wrong."""
    folder = Path(start).resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / FILE
        if path.is_file() and _mentions_gpuspec(path):
            found = read(path)
            if found is not None:
                return found
    return Config()


def _mentions_gpuspec(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return b"gpuspec" in file.read(_TOO_BIG + 1)
    except OSError:
        return False


def read(path: str | Path) -> Config | None:
    """`[tool.gpuspec]` of one pyproject.toml, checked (None when it has no such table). Raises SpecError naming
    the file, line and column."""
    shown = _shown_path(Path(path))
    text = _text(Path(path), shown)
    found = _parsed(text, shown)
    if not found:
        return None
    table = found["gpuspec"]
    locate = _Locator(shown, text)
    if not isinstance(table, dict):
        raise SpecError([Diagnostic("bad-config", "`tool.gpuspec` must be a table: `[tool.gpuspec]`",
                                    locate.table(), None)])
    return _checked(table, Path(path).resolve().parent, shown, locate)


def _parsed(text: str, shown: str) -> dict:
    """{"gpuspec": the table} as TOML gives it, or {} when the file has none. Importing tomllib costs more than
    the rest of reading the configuration, so the table is kept as JSON in the per-user cache folder, found by a
    hash of the file's text (and of the Python and the code that parsed it)."""
    import sys

    from gpuspec import cachedir
    from gpuspec.version import __version__

    material = cachedir.key(__version__, sys.version, "pyproject", text)
    cached = cachedir.read_entry("pyproject", material)
    if isinstance(cached, dict) and set(cached) <= {"gpuspec"}:
        return cached
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line, column = _position(error)
        raise SpecError([Diagnostic("bad-toml", f"{shown} is not valid TOML: {_reason(error)}",
                                    Span(shown, line, column, line, column + 1), "fix the TOML at this place")]) \
            from None
    tool = data.get("tool")
    found = {"gpuspec": tool["gpuspec"]} if isinstance(tool, dict) and "gpuspec" in tool else {}
    cachedir.store("pyproject", material, found)  # nothing when it holds what JSON cannot (a NaN, a date)
    return found


def _shown_path(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def _text(path: Path, shown: str) -> str:
    try:
        with open(path, "rb") as file:
            data = file.read(_TOO_BIG + 1)
    except OSError as error:
        raise SpecError([Diagnostic("unreadable", f"cannot read {shown}: {error.strerror or error}",
                                    Span(shown, 1, 1, 1, 1))]) from None
    if len(data) > _TOO_BIG:
        raise SpecError([Diagnostic("bad-toml", f"{shown} is larger than {_TOO_BIG} bytes",
                                    Span(shown, 1, 1, 1, 1))])
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        before = data[:error.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1:].decode("utf-8", "replace")) + 1
        raise SpecError([Diagnostic("unreadable", f"{shown} is not UTF-8: byte 0x{data[error.start]:02x} "
                                    f"cannot start or continue a character", Span(shown, line, column, line,
                                                                                   column + 1),
                                    "TOML files are UTF-8: save it as UTF-8")]) from None


def _position(error: Exception) -> tuple[int, int]:
    line, column = getattr(error, "lineno", None), getattr(error, "colno", None)
    if line is None:
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        line, column = (int(found[1]), int(found[2])) if found else (1, 1)
    return line, column or 1


def _reason(error: Exception) -> str:
    words = getattr(error, "msg", None) or re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "",
                                                  str(error))
    return words[:1].lower() + words[1:]


class _Locator:
    """Where a key of `[tool.gpuspec]` is written: its line and column, found by reading the lines as TOML lays
    them out (a `[tool.gpuspec]` header and `key = ...` lines, or dotted keys such as `tool.gpuspec.key = ...`)."""

    _HEADER = re.compile(r"\s*\[(?!\[)\s*(?P<name>[^\]]*?)\s*\]")
    _KEY = re.compile(r"\s*(?P<key>(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|"
                      r"'[^']*'))*)\s*=")

    def __init__(self, path: str, text: str):
        self.path = path
        self.lines = re.split(r"\r\n|\n", text)

    @staticmethod
    def _parts(dotted: str) -> list[str]:
        return [part.strip().strip("\"'") for part in re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", dotted)]

    def key(self, name: str) -> Span:
        table: list[str] = []
        for number, line in enumerate(self.lines, 1):
            header = self._HEADER.match(line)
            if header:
                table = self._parts(header["name"])
                if table[:3] == ["tool", "gpuspec", name]:
                    column = line.index(name) + 1 if name in line else 1
                    return Span(self.path, number, column, number, column + len(name))
                continue
            found = self._KEY.match(line)
            if found and [*table, *self._parts(found["key"])][:3] == ["tool", "gpuspec", name]:
                column = found.start("key") + found["key"].rfind(name) + 1
                return Span(self.path, number, column, number, column + len(name))
        return self.table()

    def table(self) -> Span:
        """Where `tool.gpuspec` is written: its `[tool.gpuspec]` header, or the key `gpuspec = ...` of `[tool]`
        (or `tool.gpuspec = ...`)."""
        table: list[str] = []
        for number, line in enumerate(self.lines, 1):
            header = self._HEADER.match(line)
            if header:
                table = self._parts(header["name"])
                if table[:2] == ["tool", "gpuspec"]:
                    return Span(self.path, number, 1, number, len(line) + 1)
                continue
            found = self._KEY.match(line)
            if found and [*table, *self._parts(found["key"])][:2] == ["tool", "gpuspec"]:
                column = found.start("key") + 1
                return Span(self.path, number, column, number, found.end("key") + 1)
        return Span(self.path, 1, 1, 1, 1)


def _checked(table: dict, root: Path, shown: str, locate: _Locator) -> Config:
    errors: list[Diagnostic] = []

    def wrong(key: str, message: str, help: str | None = None) -> None:
        errors.append(Diagnostic("bad-config", f"[tool.gpuspec] `{key}`: {message}", locate.key(key),
                                 help or f"`{key}` takes {KEYS[key]}"))

    for key in table:
        if key not in KEYS:
            hint = did_you_mean(key, KEYS)
            listed = "the keys are " + ", ".join(KEYS)
            errors.append(Diagnostic("unknown-config-key", f"unknown key `{key}` in [tool.gpuspec] of {shown}",
                                     locate.key(key), f"{hint} ({listed})" if hint else listed))

    def paths(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            wrong(key, f"must be a list of strings, such as [\"specs\"], not {_kind(value)}")
            return ()
        if any(not item.strip() or "\x00" in item for item in value):
            wrong(key, "holds an empty path, or one with a NUL character")
            return ()
        return tuple(item for item in value)

    def string(key: str) -> str | None:
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            wrong(key, f"must be a string, not {_kind(value)}")
            return None
        if value is not None and (not value.strip() or "\x00" in value):
            wrong(key, "must not be empty or hold a NUL character")
            return None
        return value

    from gpuspec.api import glob_problem

    def globs(key: str, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            problem = glob_problem(pattern)
            if problem is not None:
                wrong(key, f"`{pattern}` is not a glob pattern: {problem}", "a pattern is a shell glob: `*` any "
                      "characters, `?` one, `[abc]` one of a set")
                return ()
        return patterns

    found_paths = tuple(_relative(root / path) for path in paths("paths"))
    exclude = globs("exclude", paths("exclude"))
    markdown = table.get("markdown", True)
    markdown_globs: tuple[str, ...] = ()
    if isinstance(markdown, list):
        markdown_globs = globs("markdown", paths("markdown"))
        if not markdown:  # `markdown = []`
            wrong("markdown", "is an empty list", "write `markdown = false` to search no Markdown file, or give "
                                                  "glob patterns such as [\"docs/**/*.md\"]")
        markdown = True
    elif not isinstance(markdown, bool):
        wrong("markdown", f"must be true, false or a list of glob patterns, not {_kind(markdown)}")
        markdown = True
    sources: tuple[str, ...] | None = None
    if "sources" in table:
        given = table["sources"]
        if not isinstance(given, list) or not all(isinstance(item, str) for item in given):
            wrong("sources", f"must be a list of strings, such as [\"model\", \"measured\"], not {_kind(given)}")
        else:
            sources, problem = checked_sources(given)
            if problem is not None:
                wrong("sources", problem[0], problem[1])
    results = tuple(_relative(root / path) for path in paths("results"))
    profile = string("profile")
    format = string("format")
    if format is not None and format not in FORMATS:
        wrong("format", f"`{format}` is not an output format", did_you_mean(format, FORMATS) or
              f"`format` takes {KEYS['format']}")
        format = None
    device = string("device")
    tolerance = table.get("tolerance")
    if isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool):
        wrong("tolerance", f"must be a string with its unit, such as \"5%\", not the number {tolerance!r}")
        tolerance = None
    else:
        tolerance = string("tolerance")
    from gpuspec.resolve.defaults import defaults as checked_defaults

    with_device, device_problems = checked_defaults(device, None, locate.key("device"))
    with_tolerance, tolerance_problems = checked_defaults(None, tolerance, None, locate.key("tolerance"),
                                                          "[tool.gpuspec] `tolerance`")
    defaults = Defaults(with_device.device, with_tolerance.tolerance, sources)
    for key, problems in (("device", device_problems), ("tolerance", tolerance_problems)):
        errors.extend(Diagnostic(p.code, f"[tool.gpuspec] `{key}`: {p.message}", p.span, p.help) for p in problems)
    if errors:
        raise SpecError(errors)
    def named_at(key: str, values: Sequence[str]) -> tuple[tuple[str, Span, str], ...]:
        return tuple((value, locate.key(key), f"`{key}` of [tool.gpuspec]") for value in values)

    found_profile = _relative(root / profile) if profile else None
    search = Search(markdown, exclude, _relative(root), markdown_globs=markdown_globs, markdown_root=_relative(root),
                    exclude_from="`exclude` of [tool.gpuspec]", exclude_at=locate.key("exclude") if exclude else None,
                    placed=named_at("paths", found_paths))
    return Config(shown, found_paths, search, defaults, device, found_profile, results, format, frozenset(table),
                  named_at("profile", [found_profile] if found_profile else []) + named_at("results", results))


def _relative(path: Path) -> str:
    """`path` as the current folder reaches it (`specs`, `../specs`), so that reports name files as a user would."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _kind(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "a table"}
    return names.get(type(value), type(value).__name__)
