"""Report: the verdicts and diagnostics of a run, their counts and the exit code. Printers only format it."""
from __future__ import annotations

from attrs import field

from gpuspec.check import Verdict
from gpuspec.diagnostics import Diagnostic
from gpuspec.record import Record, as_tuple, record

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


@record
class Report(Record):
    """Everything one `gpuspec check` found, in file order.

    texts holds each file's text by path, so printers can show the line an error is on.
    """

    verdicts: tuple[Verdict, ...] = field(converter=as_tuple)
    diagnostics: tuple[Diagnostic, ...] = field(converter=as_tuple)
    files: tuple[str, ...] = field(converter=as_tuple)
    texts: dict[str, str] = field(factory=dict, eq=False, repr=False)

    def count(self, status: str) -> int:
        return sum(1 for v in self.verdicts if v.status == status)

    @property
    def summary(self) -> dict[str, int]:
        return {"passed": self.count("pass"), "failed": self.count("fail"), "skipped": self.count("skip"),
                "errors": len(self.diagnostics)}

    @property
    def exit_code(self) -> int:
        """2 when any input is invalid, else 1 when any claim fails, else 0."""
        if self.diagnostics:
            return EXIT_INVALID
        return EXIT_FAILED if self.count("fail") else EXIT_OK

    def summary_line(self) -> str:
        line = f"{self.count('pass')} passed, {self.count('fail')} failed"
        skipped = self.count("skip")
        return line + (f", {skipped} skipped" if skipped else "")
