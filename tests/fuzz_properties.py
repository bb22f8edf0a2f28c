"""The property each command must have on every input, checked by running the command in this process.

An input (a `Case`) is a spec file (a .gpu file or a Markdown document, under a name that may need escaping),
a command, and for `results` and `profile` a second file. `problem(case, folder)` runs it and returns None when
the property holds, else what is wrong. Properties every command shares:

- it ends in one of its own exit statuses (never 3, an internal error; never an exception, a SystemExit or a
  hang), and exit 2 comes with an error located in the file (line and column) or naming the file and key;
- no line of a human format (text, Markdown, GitHub, explain, fmt, harness, the Markdown report, stderr) holds a
  raw control, bidirectional or line-separator character, or starts with `::` (or holds `##[`) unless gpuspec
  wrote it as a GitHub workflow command; the JSON report parses as strict JSON, JUnit as XML, the HTML report
  with html.parser (balanced tags, only the report's own);
- and each command's own: check says the same twice; fmt keeps what check reads, every byte it does not lay out,
  and changes nothing the second time; --update rewrites only failing numbers, which then pass; report exits as
  check does; the plot data are finite; a harness program compiles and holds spec text only in string literals;
  a results file or profile can add verdicts but never change the model's.
"""
from __future__ import annotations

import ast
import base64
import contextlib
import functools
import html.parser
import io
import json
import os
import re
import signal
import tokenize
import traceback
import unicodedata
import xml.etree.ElementTree as ElementTree
from dataclasses import asdict, dataclass
from pathlib import Path

from gpuspec import cli

HANG_SECONDS = 60.0
COMMANDS = ("check", "explain", "fmt", "update", "report", "plot", "harness", "results", "profile")
FORMATS = ("text", "json", "junit", "markdown", "github")
HUMAN_FORMATS = ("text", "markdown", "github")
MARKDOWN = (".md", ".markdown")
ERROR_LINE = re.compile(r"^(.+?):(\d+):(\d+): error\[([a-z-]+)\]: (.+)$", re.M)
SUMMARY = re.compile(r"^\d+ passed, \d+ failed(, \d+ skipped)?$")
# A workflow command as gpuspec writes one: its properties percent-encoded, so none holds `:` or a line break.
GITHUB_COMMAND = re.compile(r"::(error|warning|notice) [^:\n]*::[^\n]*")
# Shown as a line break by some terminals and editors, or reordering what follows: never raw in a human format.
LAYOUT = frozenset("\u2028\u2029\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c\ufeff")


@dataclass(frozen=True)
class Case:
    """One input: `data` is the spec file named `name` (in a fresh folder); `side` the results file or profile
    for those commands. `option` is the command's variant: a format, a line, a picture."""

    strategy: str
    name: str
    data: bytes
    command: str
    option: str = ""
    side_kind: str = ""
    side: bytes = b""

    def to_json(self) -> dict:
        found = asdict(self)
        found["name"] = base64.b64encode(os.fsencode(self.name)).decode("ascii")
        found["data"] = base64.b64encode(self.data).decode("ascii")
        found["side"] = base64.b64encode(self.side).decode("ascii")
        return found

    @classmethod
    def from_json(cls, found: dict) -> Case:
        decoded = {**found, "name": os.fsdecode(base64.b64decode(found["name"])),
                   "data": base64.b64decode(found["data"]), "side": base64.b64decode(found["side"])}
        return cls(**decoded)

    @property
    def markdown(self) -> bool:
        return self.name.endswith(MARKDOWN)


# --- running a command here ------------------------------------------------------------------------------------

class Hang(BaseException):
    """Raised by the alarm when one command runs longer than HANG_SECONDS (nothing may swallow it)."""


def _alarm(signum, frame):
    raise Hang


@dataclass
class Outcome:
    """What a command did: its exit status (a string naming the problem when it did not return one), its output."""

    code: object
    out: str
    err: str

    def __iter__(self):
        return iter((self.code, self.out, self.err))


# Building the argument parser is most of the time a small spec takes to check; it is built once here.
_PARSER = functools.lru_cache(maxsize=1)(cli._parser)


@contextlib.contextmanager
def _inside(folder: Path):
    """Run in `folder` (names are given relative to it, as a user types them), with the parser built once and an
    alarm for hangs."""
    built, cli._parser = cli._parser, _PARSER
    before = os.getcwd()
    previous = signal.signal(signal.SIGALRM, _alarm)
    os.chdir(folder)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        os.chdir(before)
        cli._parser = built


def guarded(folder: Path, work) -> tuple[object, str | None]:
    """(what `work()` returned, None), or (None, the problem: a hang or the exception that escaped)."""
    try:
        with _inside(folder):
            return work(), None
    except Hang:
        return None, f"hang: no result after {HANG_SECONDS:g} s"
    except BaseException:  # noqa: B036 -- anything else is what the properties forbid
        return None, "exception:\n" + traceback.format_exc()[-4000:]


_NOTED: list = []


def noted(code) -> None:
    """Record the exit status of the command a case is about (the first noted counts), for the fuzzer's tallies."""
    _NOTED.append(code)


def run(folder: Path, *args: str) -> Outcome:
    """`gpuspec ARGS` run by gpuspec.cli.main in `folder`."""
    out, err = io.StringIO(), io.StringIO()

    def work():
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                return cli.main(list(args))
            except SystemExit as stop:
                return f"SystemExit({stop.code!r})"

    code, problem = guarded(folder, work)
    return Outcome(problem or code, out.getvalue(), err.getvalue())


def spellings(path: str) -> list[str]:
    """How gpuspec may name the file given as `path`: as given, or as pathlib writes it (`./-x` is `-x`)."""
    return list(dict.fromkeys([path, str(Path(path))]))


def argument(name: str) -> str:
    """A file name as a command-line argument (a name starting with `-` is written `./-x`, as a user must)."""
    return "./" + name if name.startswith("-") else name


def _write(path: Path, data: bytes) -> None:
    os.makedirs(path.parent, exist_ok=True)
    with open(os.fsencode(path), "wb") as file:
        file.write(data)


def _read(path: Path) -> bytes | None:
    try:
        with open(os.fsencode(path), "rb") as file:
            return file.read()
    except FileNotFoundError:
        return None


# --- what every output must be ---------------------------------------------------------------------------------

def _raw(char: str) -> bool:
    category = unicodedata.category(char)
    return (category == "Cc" and char not in "\n\t") or category == "Cs" or char in LAYOUT


def human_problem(text: str, what: str, github: bool = False) -> str | None:
    """None when every line of `text` is safe to show; else the first line that is not."""
    for line in text.split("\n"):
        if not line.isprintable():
            bad = next((c for c in line if _raw(c)), None)
            if bad is not None:
                return f"{what}: a raw {ascii(bad)} in the line {ascii(line[:300])}"
        if line.lstrip().startswith("::") and not (github and GITHUB_COMMAND.fullmatch(line)):
            return f"{what}: a line a CI log would run as a workflow command: {ascii(line[:300])}"
        if "##[" in line:
            return f"{what}: a line holds `##[`, which a CI log runs as a command: {ascii(line[:300])}"
    return None


def _reject(constant: str):
    raise ValueError(f"{constant} is not JSON")


def strict_json(text: str):
    """`text` parsed as RFC 8259 JSON (NaN and Infinity refused); ValueError if it is not."""
    return json.loads(text, parse_constant=_reject)


def located(out: str, paths: list[str], code: int) -> str | None:
    """The text format's errors: at least one when the exit is 2, each at a line and column of one of `paths`."""
    shown = [shown_name(path) for path in paths]
    errors = list(ERROR_LINE.finditer(out))
    if code == 2 and not errors:
        return f"exit 2 without a located error:\n{out[-2000:]}"
    if code != 2 and errors:
        return f"exit {code} with an error:\n{out[-2000:]}"
    for match in errors:
        if match.group(1) not in shown or int(match.group(2)) < 1 or int(match.group(3)) < 1:
            return f"an error without a location in {ascii(shown)}: {ascii(match.group(0)[:300])}"
    return None


def shown_name(path: str) -> str:
    """`path` as a printer shows it: controls escaped, and a leading `::` made harmless."""
    from gpuspec.report.safe import shown_line

    return shown_line(path)


def _shown_mid_line(path: str) -> str:
    from gpuspec.report.safe import shown

    return shown(path)


def github_file(path: str) -> str:
    """`path` as the file property of a workflow command: each line break percent-encoded (GitHub decodes it
    back), anything else a terminal would act on escaped, `%`, `:` and `,` percent-encoded, and `##[` broken."""
    from gpuspec.report.safe import shown

    lines = re.split(r"\r\n|\r|\n", path)
    return "%0A".join(shown(line).replace("%", "%25").replace(":", "%3A").replace(",", "%2C") for line in lines) \
        .replace("##[", "##\\x5b")


# --- check ------------------------------------------------------------------------------------------------------

def check_problem(case: Case, folder: Path) -> str | None:
    """`gpuspec check --format F FILE`: exit 0, 1, 2 (located) or 5 (saying so), its format well formed, the
    same output when run twice (the second reads the parse cache)."""
    path = argument(case.name)
    _write(folder / case.name, case.data)
    first = run(folder, "check", "--format", case.option, path)
    noted(first.code)
    found = check_output_problem(first, path, case.option)
    if found:
        return found
    second = run(folder, "check", "--format", case.option, path)
    if (second.code, second.out, second.err) != (first.code, first.out, first.err):
        return f"a second run differs: exit {first.code} then {second.code}\n--- first ---\n{first.out[-1500:]}" \
               f"\n--- second ---\n{second.out[-1500:]}"
    return None


def check_output_problem(outcome: Outcome, path: str, format: str, side: str | None = None,
                         update: bool = False) -> str | None:
    """The property of one check's output (`side`: a results file or profile given, where errors may be too;
    `update`: with --update, whose line ends the output)."""
    code, out, err = outcome
    if isinstance(code, str):
        return code
    if "Traceback" in out + err:
        return "a traceback was printed:\n" + (out + err)[-3000:]
    if code == 3:
        return "an internal error (exit 3):\n" + err[-3000:]
    if code not in (0, 1, 2, 5):
        return f"exit code {code}"
    said = (out if format in HUMAN_FORMATS else err).lower()
    if code == 5 and "nothing checked: " not in said and "nothing measured: " not in said:
        return f"exit 5 without saying that nothing was checked:\n{out[-2000:]}{err[-1000:]}"
    found = human_problem(err, "stderr")
    if format in HUMAN_FORMATS:
        found = found or human_problem(out, f"the {format} report", github=format == "github")
    if found:
        return found
    if format == "text":
        if update:
            if not re.search(r"^updated \d+ claims? in \d+ files?", out, re.M):
                return f"--update without its line:\n{out[-1000:]}"
            out = out[: out.rfind("updated ")]
        found = located(out, spellings(path) + ([side] if side else []), code)
        if found:
            return found
        if not SUMMARY.match(out.rstrip("\n").rsplit("\n", 1)[-1]):
            return f"no summary line at the end:\n{out[-1000:]}"
    elif format == "json":
        return json_report_problem(out, code, spellings(path) + ([side] if side else []))
    elif format == "junit":
        try:
            ElementTree.fromstring(out)
        except ElementTree.ParseError as error:
            return f"the JUnit report is not XML: {error}"
    elif format == "github" and code == 2:
        files = [github_file(p) for p in spellings(path) + ([side] if side else [])]
        if not any(f"::error file={f},line=" in out for f in files):
            return f"exit 2 without a located ::error command:\n{out[-2000:]}"
    return None


def json_report_problem(out: str, code: int, paths: list[str]) -> str | None:
    try:
        report = strict_json(out)
    except ValueError as error:
        return f"the JSON report is not strict JSON: {error}"
    summary = report["summary"]
    # a run given results (or --measure) that measured nothing checked nothing, though the model's claims held
    unmeasured = (report.get("nothing_checked") or "").startswith("nothing measured: ")
    expected = 2 if report["errors"] else 1 if summary["failed"] else 0 if summary["passed"] and not unmeasured else 5
    if code != expected or summary["errors"] != len(report["errors"]):
        return f"exit {code} with the JSON summary {summary} and {len(report['errors'])} errors"
    for error in report["errors"]:
        if error["file"] not in paths or not (isinstance(error["line"], int) and error["line"] >= 1) \
                or not (isinstance(error["column"], int) and error["column"] >= 1):
            return f"a JSON error without a location in the files given: {ascii(error)[:600]}"
    return None


def report_json(folder: Path, path: str, *more: str) -> tuple[object, dict | None, str | None]:
    """(exit status, the JSON report, a problem) of `check --format json` with `more` options."""
    outcome = run(folder, "check", "--format", "json", *more, path)
    found = check_output_problem(outcome, path, "json", side=more[-1] if more else None)
    if found:
        return outcome.code, None, found
    return outcome.code, strict_json(outcome.out), None


# --- explain ----------------------------------------------------------------------------------------------------

def explain_problem(case: Case, folder: Path) -> str | None:
    """`gpuspec explain FILE[:LINE]`: exit 0 with its derivations, or 2 with located errors; safe lines."""
    path = argument(case.name)
    _write(folder / case.name, case.data)
    target = f"{path}:{case.option}" if case.option else path
    code, out, err = run(folder, "explain", target)
    noted(code)
    return _plain_command(code, out, err, path, "explain")


def _plain_command(code, out: str, err: str, path: str, command: str, allowed=(0, 2)) -> str | None:
    """The property of explain and harness: their exits, errors located on stderr, every line safe."""
    if isinstance(code, str):
        return code
    if "Traceback" in out + err:
        return "a traceback was printed:\n" + (out + err)[-3000:]
    if code not in allowed:
        return f"exit {code}:\n{err[-2000:]}"
    found = human_problem(err, f"{command}'s stderr") or (human_problem(out, f"{command}'s output")
                                                            if command != "harness" else None)
    if found:
        return found
    errors = list(ERROR_LINE.finditer(err))
    beyond = re.search(r"^gpuspec \w+: (.+):(\d+): past the end of the file, which has (\d+) lines?$", err, re.M)
    # the name is mid-line there, so a leading `::` needs no breaking (a workflow command starts its line)
    names = {form(spelling) for spelling in spellings(path) for form in (shown_name, _shown_mid_line)}
    if beyond and (beyond.group(1) not in names
                   or int(beyond.group(2)) <= int(beyond.group(3))):
        return f"a line past the end said wrongly: {ascii(beyond.group(0)[:300])}"
    # a line with nothing there (or line 0): the words explain, harness and plot share (api.line_problem)
    nothing_there = re.search(r"^gpuspec \w+: .+:\d+: (no workload on this line|lines are numbered from 1)", err,
                              re.M)
    if code == 2 and not errors and not beyond and not nothing_there and ": nothing to measure: " not in err:
        return f"exit 2 without a located error:\n{err[-2000:]}"
    for match in errors:
        if match.group(1) not in map(shown_name, spellings(path)) or int(match.group(2)) < 1 \
                or int(match.group(3)) < 1:
            return f"an error without a location in {ascii(path)}: {ascii(match.group(0)[:300])}"
    return None


# --- fmt --------------------------------------------------------------------------------------------------------

_BREAK = re.compile(r"\r\n|\r|\n")


def meaning(folder: Path, path: str) -> tuple[object, tuple | None]:
    """What check reads in a file, without where: each verdict's claim, source, status and value, and each error's
    code (columns and lines move when fmt lays a line out)."""
    from gpuspec.api import run_check

    def work():
        report = run_check([path])
        # a value written as arithmetic is quoted as written, and fmt lays out its spaces: `1^1 %` says `1^1%`
        verdicts = tuple((v.claim.metric, v.claim.comparator, "".join(v.claim.expected.written.split()), v.source,
                          v.status, None if v.actual is None else repr(v.actual.number)) for v in report.verdicts)
        return verdicts, tuple(sorted(d.code for d in report.diagnostics))

    found, problem = guarded(folder, work)
    return problem, found


def fmt_problem(case: Case, folder: Path) -> str | None:
    """`gpuspec fmt FILE`: exit 0 or 2 (the file then unchanged); what check reads is unchanged; the line breaks
    (one kind stays that kind), the byte-order mark and, in Markdown, every byte outside the gpu fences' bodies
    are kept; a second fmt and `fmt --check` change nothing."""
    path = argument(case.name)
    file = folder / case.name
    _write(file, case.data)
    problem, before = meaning(folder, path)
    if problem:
        return "checking before fmt: " + problem
    code, out, err = run(folder, "fmt", path)
    noted(code)
    if isinstance(code, str):
        return code
    found = human_problem(out, "fmt's output") or human_problem(err, "fmt's stderr")
    if found:
        return found
    after_bytes = _read(file)
    if code == 2:
        if after_bytes != case.data:
            return "fmt refused the file (exit 2) but changed it"
        if "gpuspec fmt: " not in err:
            return f"exit 2 without saying why:\n{err[-2000:]}"
        return None
    if code != 0:
        return f"exit {code}:\n{err[-2000:]}"
    if after_bytes == case.data:
        return None
    problem, after = meaning(folder, path)
    if problem:
        return "checking after fmt: " + problem
    if after != before:
        return f"fmt changed what check reads:\n{before}\n{after}\n--- after fmt ---\n{after_bytes[:3000]!r}"
    found = _kept_bytes(case.data, after_bytes, case.markdown)
    if found:
        return found
    code, out, err = run(folder, "fmt", path)
    if code != 0 or _read(file) != after_bytes:
        return f"a second fmt changed the file again (exit {code}):\n{after_bytes[:2000]!r}\n{_read(file)[:2000]!r}"
    code, out, err = run(folder, "fmt", "--check", path)
    if code != 0:
        return f"fmt --check says the formatted file would change (exit {code}): {out[-500:]}"
    return None


def _kept_bytes(before: bytes, after: bytes, markdown: bool) -> str | None:
    bom = b"\xef\xbb\xbf"
    if before.startswith(bom) != after.startswith(bom):
        return "fmt added or dropped the byte-order mark"
    old, new = before.removeprefix(bom).decode("utf-8"), after.removeprefix(bom).decode("utf-8")
    if not markdown:
        kinds = set(_BREAK.findall(old))
        if len(kinds) == 1 and not set(_BREAK.findall(new)) <= kinds:
            return f"fmt changed the line breaks {kinds} to {set(_BREAK.findall(new))}"
        return None
    outside_old, outside_new = _outside_fences(old), _outside_fences(new)
    if outside_old != outside_new:
        changed = next(i for i, (a, b) in enumerate(zip(outside_old + [None], outside_new + [None])) if a != b)
        return f"fmt changed Markdown outside the gpu fences: {outside_old[changed:changed + 2]!a} became " \
               f"{outside_new[changed:changed + 2]!a}"
    return None


def _outside_fences(document: str) -> list[tuple[str, str]]:
    """Each line of a Markdown document with its line break, but for the lines of the gpu fences' bodies."""
    from markdown_it import MarkdownIt

    from gpuspec import markdown
    from gpuspec.text import split_lines

    lines, breaks = split_lines(document)
    inside: set[int] = set()
    for token in MarkdownIt("commonmark").parse("\n".join(lines)):
        if token.type == "fence" and token.info.split()[:1] == [markdown.FENCE_LANGUAGE] and token.map:
            first, _ = token.map
            inside.update(range(first + 1, first + 1 + len(markdown.fence_body(token))))
    return [(line, brk) for i, (line, brk) in enumerate(zip(lines, breaks)) if i not in inside]


# --- check --update ---------------------------------------------------------------------------------------------

# What --update may write in place of what was written: a number, or the word of a bound.
# Errors of a file that check could not read or parse: --update must leave such a file alone.
READING_ERRORS = ("syntax", "unreadable", "line-separator", "too-deep")
_VALUE = re.compile(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|\b(?:memory|compute|overhead)\b")


def update_problem(case: Case, folder: Path) -> str | None:
    """`gpuspec check --update FILE` on a copy: only failing model claims' numbers change (every other byte, line
    break and the byte-order mark kept), each rewritten claim then passes, every other verdict is as it was, and the
    file still checks."""
    path = argument(case.name)
    file = folder / case.name
    _write(file, case.data)
    code, before, found = report_json(folder, path)
    if found:
        return "before --update: " + found
    outcome = run(folder, "check", "--update", path)
    noted(outcome.code)
    found = check_output_problem(outcome, path, "text", update=True)
    if found:
        return found
    after_bytes = _read(file)
    if after_bytes == case.data:
        return None
    if any(e["code"] in READING_ERRORS for e in before["errors"]):
        return "--update changed a file that does not parse"
    bom = b"\xef\xbb\xbf"
    if case.data.startswith(bom) != after_bytes.startswith(bom):
        return "--update added or dropped the byte-order mark"
    from gpuspec.text import split_lines

    old_lines, old_breaks = split_lines(case.data.removeprefix(bom).decode("utf-8"))
    new_lines, new_breaks = split_lines(after_bytes.removeprefix(bom).decode("utf-8"))
    if old_breaks != new_breaks:
        return "--update changed the line breaks"
    failing = {r["line"] for r in before["results"] if r["status"] == "fail" and r["source"] == "model"}
    for number, (old, new) in enumerate(zip(old_lines, new_lines), 1):
        if old != new:
            if number not in failing:
                return f"--update changed line {number}, which has no failing claim: {old!a} -> {new!a}"
            found = _only_numbers_changed(old, new)
            if found:
                return f"line {number}: {found}"
    code_after, after, found = report_json(folder, path)
    if found:
        return "after --update: " + found
    where = [[(e["line"], e["code"], e["message"]) for e in report["errors"]] for report in (before, after)]
    if where[0] != where[1]:
        return f"--update changed the file's errors: {where[0]!a} -> {where[1]!a}"
    old_results, new_results = before["results"], after["results"]
    if len(old_results) != len(new_results):
        return f"--update changed how many verdicts there are: {len(old_results)} -> {len(new_results)}"
    for old, new in zip(old_results, new_results):
        if old["claim"] != new["claim"]:
            if old["status"] != "fail" or old["source"] != "model":
                return f"--update rewrote a claim that did not fail on the model: {old['claim']!a}"
            if new["status"] != "pass":
                return f"the rewritten claim {new['claim']!a} (was {old['claim']!a}) does not pass: " \
                       f"{new['message']!a}"
        elif (old["status"], old["actual"], old["source"]) != (new["status"], new["actual"], new["source"]):
            return f"--update changed the verdict of {old['claim']!a}: {old['status']} -> {new['status']}"
    return None


def _only_numbers_changed(old: str, new: str) -> str | None:
    """None when `new` is `old` with numbers (or a bound's word) replaced and nothing else."""
    if _VALUE.sub("#", old) != _VALUE.sub("#", new):
        return f"more than a number changed: {old!a} -> {new!a}"
    return None


# --- report -----------------------------------------------------------------------------------------------------

_DOCUMENT_TAGS = None


def _report_tags() -> frozenset[str]:
    """The tags the HTML report writes (those in gpuspec/report/document.py): no other may appear."""
    global _DOCUMENT_TAGS
    if _DOCUMENT_TAGS is None:
        import gpuspec.report.document as document

        _DOCUMENT_TAGS = frozenset(re.findall(r"<([a-z][a-z0-9]*)", Path(document.__file__).read_text("utf-8")))
    return _DOCUMENT_TAGS


class _Html(html.parser.HTMLParser):
    VOID = {"br", "img", "meta", "hr", "link", "input", "col", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problem: str | None = None

    def _fail(self, problem: str) -> None:
        self.problem = self.problem or problem

    def handle_starttag(self, tag, attrs):
        if tag not in _report_tags():
            self._fail(f"a <{tag}> the report does not write")
        for name, value in attrs:
            if name.startswith("on") or (value or "").lstrip().lower().startswith("javascript:"):
                self._fail(f"an attribute that runs code: {name}={value!a}")
            if tag == "img" and name == "src" and not (value or "").startswith("data:image/svg+xml;base64,"):
                self._fail(f"an image that is not an inlined SVG: {value[:100]!a}")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self._fail(f"</{tag}> closes {'<' + self.stack[-1] + '>' if self.stack else 'nothing'}")
        elif self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if any(_raw(c) for c in data if c not in "\r"):
            bad = next(c for c in data if _raw(c) and c != "\r")
            self._fail(f"a raw {ascii(bad)} in the text {ascii(data[:200])}")


def html_problem(text: str) -> str | None:
    parser = _Html()
    parser.feed(text)
    parser.close()
    if parser.problem:
        return "the HTML report: " + parser.problem
    if parser.stack:
        return f"the HTML report leaves {parser.stack} open"
    return None


# The specs every command but check is given: mostly ones that check, so that its own work is done.
KERNELS = ("elementwise", "on", "matmul", "rowwise", "attention")
MOSTLY_VALID = ("grown", "grown", "grown", "grown", "markdown", "markdown", "mutated", "unicode", "bytes")
REPORT_NAMES = {"html": ("report.html", "::error title=FORGED::r.html", "r\x1b[2J.html"),
                "markdown": ("report.md", "@someone #1.md")}


def report_problem(case: Case, folder: Path) -> str | None:
    """`gpuspec report FILE --out R`: written whenever it exits 0, 1 or 5, with check's exit status; the HTML well
    formed, the Markdown and every printed line safe."""
    format, _, out_name = case.option.partition(":")
    path = argument(case.name)
    _write(folder / case.name, case.data)
    code, _, found = report_json(folder, path)
    if found:
        return "check: " + found
    outcome = run(folder, "report", path, "--out", out_name or REPORT_NAMES[format][0])
    noted(outcome.code)
    written = _read(folder / (out_name or REPORT_NAMES[format][0]))
    return document_problem(outcome, written, format, code)


def document_problem(outcome: Outcome, written: bytes | None, format: str, check_code) -> str | None:
    code, out, err = outcome
    if isinstance(code, str):
        return code
    if "Traceback" in out + err:
        return "a traceback was printed:\n" + (out + err)[-3000:]
    if code not in (0, 1, 2, 5):
        return f"exit {code}:\n{err[-2000:]}"
    found = human_problem(out, "report's output") or human_problem(err, "report's stderr")
    if found:
        return found
    if written is None:
        if code != 2:
            return f"exit {code} and no report written"
        return None if "gpuspec report: " in err else f"exit 2, no report, and no reason:\n{err[-2000:]}"
    if code != check_code:
        return f"report exits {code} where check exits {check_code}"
    text = written.decode("utf-8")
    return html_problem(text) if format == "html" else human_problem(text, "the Markdown report")


# --- plot data ----------------------------------------------------------------------------------------------------

def plot_problem(case: Case, folder: Path, providers=None) -> str | None:
    """gpuspec.plot.data for a roofline and a timeline of the file (or one line): no exception but a located
    SpecError or a SelectionError, and every number in the pictures' data finite (positive on the log axes)."""
    picture, _, line = case.option.partition(":")
    path = argument(case.name)
    _write(folder / case.name, case.data)
    found, problem = guarded(folder, lambda: _plot_data(path, int(line) if line else None, picture, providers))
    return problem or found


def _plot_data(path: str, line: int | None, picture: str, providers) -> str | None:
    import math

    from gpuspec.diagnostics import SpecError
    from gpuspec.plot import data, select

    noted("error")
    try:
        targets = select.load_targets([(path, line)])
        if picture == "roofline":
            shown = data.roofline(select.roofline_subjects(targets), providers)
        else:
            shown = data.timeline(select.stream_subjects(targets))
    except SpecError as error:
        if not error.diagnostics or any(d.span is None or d.span.line < 1 for d in error.diagnostics):
            return f"an error without a location: {[d.message for d in error.diagnostics]!a}"
        return None
    except select.SelectionError:  # said in words (the command line escapes it as it prints it)
        _NOTED[-1] = "nothing to draw"
        return None
    except data.Undrawable as error:  # a point or roof off every axis: refused at its line, as `plot` prints it
        if not re.search(r":\d+: ", str(error)):
            return f"a picture refused without a location: {str(error)!a}"
        return None
    _NOTED[-1] = "drawn"
    numbers = list(_numbers(shown))
    bad = [(where, n) for where, n in numbers if not math.isfinite(n)]
    if bad:
        return f"numbers in the {picture} data that are not finite: {bad[:5]}"
    if picture == "roofline":
        for panel in shown:
            for low, high in (panel.x_limits, panel.y_limits):
                if not 0 < low < high:
                    return f"axis limits {low}..{high} on a log axis"
            for point in panel.points:
                if not (panel.x_limits[0] <= point.intensity <= panel.x_limits[1]
                        and panel.y_limits[0] <= point.flop_rate <= panel.y_limits[1]) \
                        or point.intensity <= 0 or point.flop_rate <= 0:
                    return f"a point outside its panel: {point}"
    else:
        if not 0 < shown.span:
            return f"a timeline spans {shown.span} s"
        for lane in shown.lanes:
            for interval in (*lane.host, *lane.gpu, *lane.gaps):
                if not 0 <= interval.start <= interval.end:
                    return f"an interval that ends before it starts: {interval}"
            if len(lane.host) + len(lane.gpu) > 4 * data.MAX_DRAWN + 8:
                return f"a timeline lane draws {len(lane.host) + len(lane.gpu)} shapes"
    return None


def _numbers(value, where: str = ""):
    """Every float in the pictures' data (attrs classes, tuples), with where it is."""
    import attrs

    if isinstance(value, float):
        yield where, value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _numbers(item, f"{where}[{i}]")
    elif attrs.has(type(value)):
        for field in attrs.fields(type(value)):
            if field.name != "workload":
                yield from _numbers(getattr(value, field.name), f"{where}.{field.name}")


# --- harness --------------------------------------------------------------------------------------------------

def harness_problem(case: Case, folder: Path) -> str | None:
    """`gpuspec harness FILE[:LINE]`: exit 0 with a program that compiles and holds the spec's own text (MARKER)
    only inside string literals, or exit 2 with a located error or the reason nothing is measured."""
    from fuzzing import MARKER

    path = argument(case.name)
    _write(folder / case.name, case.data)
    code, out, err = run(folder, "harness", f"{path}:{case.option}" if case.option else path)
    noted(code)
    found = _plain_command(code, out, err, path, "harness")
    if found or code != 0:
        return found
    try:
        compile(out, "harness.py", "exec", dont_inherit=True)
        ast.parse(out)
    except (SyntaxError, ValueError) as error:
        return f"the harness program does not compile: {error}"
    for token in tokenize.generate_tokens(io.StringIO(out).readline):
        if MARKER in token.string and token.type != tokenize.STRING:
            return f"spec text outside a string literal in the harness program, line {token.start[0]}: " \
                   f"{ascii(token.line[:300])}"
    return human_problem(out, "the harness program")


# --- results files and profiles -------------------------------------------------------------------------------

def sources_problem(case: Case, folder: Path) -> str | None:
    """`gpuspec check --results F` / `--profile F`: exit 0, 1, 2 or 5 as check, an error naming F (exit 2) when F is
    not what gpuspec writes, and never a model verdict other than check without F gives (the file is evidence
    beside the model, not a change to it): a claim that fails on the model fails the run however F looks."""
    option = "--results" if case.command == "results" else "--profile"
    side = "measured.json" if case.command == "results" else "profile.json"
    path = argument(case.name)
    _write(folder / case.name, case.data)
    _write(folder / side, case.side)
    code, alone, found = report_json(folder, path)
    if found:
        return "check alone: " + found
    code_with, beside, found = report_json(folder, path, option, side)
    noted(code_with)
    if found:
        return f"check {option}: {found}"
    # a model verdict's `realistic` value is the calibrated source's (the profile given, else the published one)
    model = [{k: v for k, v in r.items() if k != "realistic"} for r in alone["results"] if r["source"] == "model"]
    model_beside = [{k: v for k, v in r.items() if k != "realistic"} for r in beside["results"]
                    if r["source"] == "model"]
    if model != model_beside:
        changed = next((a, b) for a, b in zip(model + [None], model_beside + [None]) if a != b)
        return f"the {option[2:]} file changed a model verdict: {ascii(changed)[:1500]}"
    bad_file = [e for e in beside["errors"] if e["file"] == side]
    if bad_file and case.side_kind == "valid":
        return f"a {option[2:]} file as gpuspec writes one is refused: {ascii(bad_file[0]['message'])[:1000]}"
    if len(beside["errors"]) != len(alone["errors"]) + len(bad_file):
        return f"errors differ beyond the {option[2:]} file's: {ascii(beside['errors'])[:1500]}"
    if code == 1 and code_with not in (1, 2):
        return f"a claim fails on the model, yet with {option} the run exits {code_with}"
    if code == 2 and code_with != 2:
        return f"the spec has errors, yet with {option} the run exits {code_with}"
    human = run(folder, "check", "--format", case.option, option, side, path)
    found = check_output_problem(human, path, case.option, side=side)
    if found:
        return f"check --format {case.option} {option}: {found}"
    if human.code != code_with:
        return f"--format {case.option} exits {human.code}, --format json {code_with}"
    if case.command == "profile" and code != 2:
        return _plot_with_profile(case, folder, side)
    return None


def _plot_with_profile(case: Case, folder: Path, side: str) -> str | None:
    """The roofline's data with the calibrated source beside the model, as `plot roofline --profile` draws it."""
    from gpuspec import profiles
    from gpuspec.plot import data
    from gpuspec.sources import Calibrated

    def providers():
        try:
            return {"model": data.ModelSource(), "calibrated": Calibrated(profiles.read_profile(side))}
        except profiles.ProfileError:
            return None

    found, problem = guarded(folder, providers)
    if problem or found is None:
        return problem
    return plot_problem(Case(case.strategy, case.name, case.data, "plot", "roofline"), folder, found)


# --- numbers in prose ---------------------------------------------------------------------------------------

def prose_problem(case: Case, folder: Path) -> str | None:
    """A document with numbers checked in its prose: check's property in JSON; every claim on a line that holds a
    number check stands at the first digit of a number of that line (the number the reader reads); and markdown-it
    renders the document as it renders it without each comment gpuspec reads as a check, which it keeps as an
    HTML comment (a reader never sees one)."""
    found = check_problem(Case(case.strategy, case.name, case.data, "check", "json"), folder)
    if found:
        return found
    from markdown_it import MarkdownIt

    from gpuspec import markdown

    text = case.data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "surrogatepass")
    document = _BREAK.sub("\n", text)
    lines = document.split("\n")
    code, report, found = report_json(folder, argument(case.name))
    if found:
        return found
    checks = [c for c in markdown.extract(case.name, document).prose if c.where == "inline"]
    on_lines = {c.line for c in checks}
    for result in report["results"]:
        if result["file"] == argument(case.name) and result["line"] in on_lines:
            row = lines[result["line"] - 1]
            at = result["column"] - 1
            if not (0 <= at < len(row) and row[at].isdigit()) or (at and row[at - 1].isdigit()):
                return f"a number check's claim {result['claim']!a} is at column {result['column']} of " \
                       f"{row!a}, not at a number"
    # A `*` or `_` right before a comment pairs by what follows it (CommonMark's flanking rules), so a check after
    # emphasis may change how unmatched stars pair, as any character there would: such pages are not compared.
    if any(lines[c.line - 1][c.column - 2:c.column - 1] in ("*", "_") for c in checks if c.column > 1):
        return None
    # Each check swapped for a marker comment of its own: the page holds each marker once, with the check's own
    # text in their places it is the page, and without them it is the page of the document without the checks.
    marked, bare = lines[:], lines[:]
    for index, check in sorted(enumerate(checks), key=lambda item: (item[1].line, -item[1].column)):
        for copy, put in ((marked, f"<!--K{index}-->"), (bare, "")):
            row = copy[check.line - 1]
            copy[check.line - 1] = row[:check.column - 1] + put + row[check.end_column - 1:]
    parser = MarkdownIt("commonmark")
    try:
        page, marked_page, bare_page = (parser.render(text) for text in (document, "\n".join(marked),
                                                                           "\n".join(bare)))
    except Exception as error:  # noqa: BLE001 (markdown-it's own failure is not gpuspec's)
        return None if "surrogates" in str(error) else f"markdown-it failed: {error!a}"
    restored, removed = marked_page, marked_page
    for index, check in enumerate(checks):
        marker = f"<!--K{index}-->"
        if marked_page.count(marker) != 1:
            return f"markdown-it does not keep the check at {check.line}:{check.column} as an HTML comment"
        restored = restored.replace(marker, lines[check.line - 1][check.column - 1:check.end_column - 1])
        removed = removed.replace(marker, "")
    def seen(html: str) -> str:  # what a reader sees the same: a space before a line's end is never shown
        return re.sub(r"\s+", " ", html).replace(" </", "</").replace(" <br", "<br")

    if restored != page or seen(removed) != seen(bare_page):
        return "the page is not the page without the checks: a comment gpuspec reads is not one markdown-it hides" \
               f"\n--- with ---\n{page[:1500]!a}\n--- without ---\n{bare_page[:1500]!a}"
    return None


# --- one input -----------------------------------------------------------------------------------------------

PROPERTIES = {"check": check_problem, "explain": explain_problem, "fmt": fmt_problem, "update": update_problem,
              "report": report_problem, "plot": plot_problem, "harness": harness_problem,
              "results": sources_problem, "profile": sources_problem, "prose": prose_problem}


def problem(case: Case, folder: Path, codes: dict | None = None) -> str | None:
    """None when `case` has its command's property, else what is wrong. The folder is emptied first. `codes`, when
    given, counts the exit status of the command the case is about."""
    import shutil

    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
    _NOTED.clear()
    found = PROPERTIES[case.command](case, folder)
    if codes is not None:
        code = _NOTED[0] if _NOTED else "none"
        code = code if isinstance(code, int) or code in ("drawn", "nothing to draw", "error") else "crash"
        codes[code] = codes.get(code, 0) + 1
    return found


def save_reproducer(case: Case, found: str, folder: Path) -> Path:
    """Write the case (its files as they were, and case.json to replay it) into a new folder under `folder`."""
    import hashlib

    digest = hashlib.sha256(json.dumps(case.to_json(), sort_keys=True).encode()).hexdigest()[:12]
    where = folder / f"{case.command}-{case.strategy}-{digest}"
    where.mkdir(parents=True, exist_ok=True)
    (where / "case.json").write_text(json.dumps(case.to_json(), indent=1), encoding="utf-8")
    (where / "problem.txt").write_text(found, encoding="utf-8", errors="backslashreplace")
    _write(where / "files" / case.name, case.data)
    if case.side:
        _write(where / "files" / ("measured.json" if case.command == "results" else "profile.json"), case.side)
    return where


def load_reproducer(where: Path) -> Case:
    return Case.from_json(json.loads((where / "case.json").read_text(encoding="utf-8")))


# --- inputs for each command ---------------------------------------------------------------------------------

def cases(command: str, strategies: tuple[str, ...] | None = None):
    """A strategy for the Cases of `command`: a spec file from each of fuzzing's strategies (or those given), the
    command's variant, and for results and profile the second file."""
    import fuzzing
    from hypothesis import strategies as st

    @st.composite
    def build(draw) -> Case:
        if command in ("results", "profile"):
            made = fuzzing.results_cases() if command == "results" else fuzzing.profile_cases()
            strategy, name, data, side_kind, side = draw(made)
            return Case(strategy, name, data, command, fuzzing.pick(draw, HUMAN_FORMATS), side_kind, side)
        picture = fuzzing.pick(draw, ("roofline", "timeline")) if command == "plot" else None
        required = ()
        if command in ("plot", "harness"):  # a workload there is something to draw or measure
            required = ("stream",) if picture == "timeline" else (fuzzing.pick(draw, KERNELS),)
        mix = fuzzing.SPEC_STRATEGIES if command == "check" else MOSTLY_VALID
        strategy, name, data = draw(fuzzing.spec_files(strategies or mix, required))
        at = ""
        if command in ("explain", "harness", "plot") and not draw(fuzzing.integers(0, 2)):  # one line of the file
            workloads = [line for line, _, _ in fuzzing.workloads_of(name, data)]
            lines = data.count(b"\n") + data.count(b"\r") + 2
            at = str(fuzzing.choose(draw, workloads) if workloads and draw(fuzzing.integers(0, 3))
                     else draw(fuzzing.integers(1, lines)))
        if command == "check":
            option = fuzzing.pick(draw, FORMATS)
        elif command in ("explain", "harness"):
            option = at
        elif command == "report":
            format = fuzzing.pick(draw, ("html", "html", "markdown"))
            option = f"{format}:{fuzzing.pick(draw, REPORT_NAMES[format])}"
        elif command == "plot":
            option = picture + (f":{at}" if at else "")
        else:
            option = ""
        return Case(strategy, name, data, command, option)

    return build()
