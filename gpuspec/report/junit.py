"""The JUnit XML report: a testsuite per spec file and a testcase per verdict and error, for CI systems to read.

CI systems show its names and messages to people, so user text in them is shown as in the text report (control
characters and bidirectional marks as escapes), and nothing XML cannot hold is written.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpuspec.diagnostics import Diagnostic
from gpuspec.report import Report
from gpuspec.report.safe import shown
from gpuspec.report.text import WHOLE, Documents, error, failure
from gpuspec.verdicts import Verdict

# The suite that holds errors without a file (an unreadable path, a bad option).
NO_FILE = "gpuspec"

# What XML 1.0 cannot hold even as a character reference: C0 controls other than tab, newline and
# carriage return; lone surrogates; U+FFFE and U+FFFF.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """`text` with each character XML 1.0 forbids written as a visible escape (`\\x1b`, `\\ud800`)."""
    return _FORBIDDEN.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def _attribute(text: str) -> str:
    """User text for one attribute: one line, shown as the text report shows it."""
    return xml_safe(shown(text))


def _body(text: str) -> str:
    """User text of several lines: each shown as the text report shows it, the line breaks kept."""
    return xml_safe("\n".join(shown(line) for line in text.split("\n")))


def classname(path: str) -> str:
    """The file path as a dotted class name: `specs/gpu-execution.gpu` is `specs.gpu-execution`."""
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    head, dot, extension = path.rpartition(".")
    if dot and head and "/" not in extension:
        path = head
    return path.replace("/", ".").strip(".") or NO_FILE


def testcase_name(verdict: Verdict) -> str:
    """A testcase's name, the same on every run: the line, the claim as written and the source."""
    claim = verdict.claim
    return f"L{claim.span.line} {claim.text} [{verdict.source}]"


def error_name(diagnostic: Diagnostic) -> str:
    span = diagnostic.span
    return f"error[{diagnostic.code}] L{span.line}:{span.column}" if span else f"error[{diagnostic.code}]"


class _Suite:
    def __init__(self, name: str):
        self.name = name
        self.cases: list[ET.Element] = []
        self.names: dict[str, int] = {}
        self.counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}

    def case(self, name: str, line: int | None) -> ET.Element:
        seen = self.names.get(name, 0) + 1  # the same claim twice on one line: number the repeats
        self.names[name] = seen
        if seen > 1:
            name = f"{name} #{seen}"
        attributes = {"classname": classname(self.name) if self.name != NO_FILE else NO_FILE, "name": name}
        if self.name != NO_FILE:
            attributes["file"] = self.name
        if line is not None:
            attributes["line"] = str(line)
        element = ET.Element("testcase", {k: _attribute(v) for k, v in attributes.items()})
        self.cases.append(element)
        self.counts["tests"] += 1
        return element


def _child(parent: ET.Element, tag: str, message: str, body: str | None = None, kind: str | None = None) -> None:
    attributes = {"message": _attribute(message)}
    if kind is not None:
        attributes["type"] = _attribute(kind)
    element = ET.SubElement(parent, tag, attributes)
    if body:
        element.text = _body(body)


def render(report: Report) -> str:
    suites: dict[str, _Suite] = {path: _Suite(path) for path in report.files}

    def suite(path: str) -> _Suite:
        if path not in suites:
            suites[path] = _Suite(path)
        return suites[path]

    documents = Documents(report.texts)
    by_claim: dict[int, list[Verdict]] = {}
    for verdict in report.verdicts:
        by_claim.setdefault(id(verdict.claim), []).append(verdict)
    for verdict in report.verdicts:
        claim = verdict.claim
        into = suite(claim.span.file)
        case = into.case(testcase_name(verdict), claim.span.line)
        if verdict.status == "fail":
            into.counts["failures"] += 1
            lines = failure(verdict, by_claim[id(claim)], depth=WHOLE)  # as check -v shows it
            _child(case, "failure", verdict.message, "\n".join(lines), "fail")
        elif verdict.status == "skip":
            into.counts["skipped"] += 1
            _child(case, "skipped", verdict.reason or verdict.message)
    for diagnostic in report.diagnostics:
        span = diagnostic.span
        into = suite(span.file if span else NO_FILE)
        case = into.case(error_name(diagnostic), span.line if span else None)
        into.counts["errors"] += 1
        _child(case, "error", diagnostic.message, "\n".join(error(diagnostic, documents)), diagnostic.code)
    warnings: dict[str, list[str]] = {}  # a suite's warnings go to its system-err: they are no testcase
    for warning in report.warnings:
        name = suite(warning.span.file if warning.span else NO_FILE).name
        warnings.setdefault(name, []).extend(error(warning, documents, "warning"))

    totals = {key: sum(s.counts[key] for s in suites.values()) for key in ("tests", "failures", "errors", "skipped")}
    root = ET.Element("testsuites", {"name": "gpuspec", **{k: str(v) for k, v in totals.items()}})
    for s in suites.values():
        element = ET.SubElement(root, "testsuite", {"name": _attribute(s.name),
                                                    **{k: str(v) for k, v in s.counts.items()}})
        element.extend(s.cases)
        if s.name in warnings:
            ET.SubElement(element, "system-err").text = _body("\n".join(warnings[s.name]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
