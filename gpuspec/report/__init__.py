"""Report: the verdicts and diagnostics of a run, their counts and the exit code. Printers only format it."""
from __future__ import annotations

from pathlib import Path

from attrs import field

from gpuspec.diagnostics import Diagnostic
from gpuspec.record import Record, as_tuple, record
from gpuspec.verdicts import Verdict

# The exit codes of `gpuspec check` (and `report`), as pytest numbers its own: a run that checked nothing is
# not a pass, and a crash is never mistaken for a failing claim.
EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_INTERNAL, EXIT_NOTHING = 0, 1, 2, 3, 5
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # 128 + SIGINT, 128 + SIGTERM, as a shell reports them
EXIT_CODES = f"""exit codes:
  {EXIT_OK}    every claim was checked by some source and holds
  {EXIT_FAILED}    a claim fails against some source
  {EXIT_INVALID}    the input is invalid or the command is misused (errors win over failures)
  {EXIT_INTERNAL}    an internal error in gpuspec (a bug: please report it; GPUSPEC_DEBUG=1 shows the traceback)
  {EXIT_NOTHING}    nothing was checked: no spec files or claims were found, or every claim was skipped, or a run
       given --measure or --results measured nothing (every measured claim was skipped)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)
  {EXIT_TERMINATED}  terminated (SIGTERM: stopped as Ctrl-C stops it)"""


@record
class Rebinding(Record):
    """What `check --device` did: every spec's `device` statements stood for one catalog device."""

    device: str               # its catalog name
    title: str
    asked: str                # what --device said: a name, or auto
    gpu: str | None = None    # for auto: the GPU found, as its driver names it

    def line(self) -> str:
        how = f"the GPU found ({self.gpu})" if self.gpu else f"--device {self.asked}"
        return (f"every spec rebound to {self.device} ({self.title}) by {how}: each `device` statement stands for "
                f"it; a derived device keeps its overrides, applied to {self.device}")


@record
class Report(Record):
    """Everything one `gpuspec check` found, in file order.

    texts holds each file's text by path, so printers can show the line an error is on. warnings are problems
    that change no verdict and no exit code (a fence that was likely meant to be a gpu block). paths are the
    paths the run was asked to check, for saying where nothing was found.
    """

    verdicts: tuple[Verdict, ...] = field(converter=as_tuple)
    diagnostics: tuple[Diagnostic, ...] = field(converter=as_tuple)
    files: tuple[str, ...] = field(converter=as_tuple)
    texts: dict[str, str] = field(factory=dict, eq=False, repr=False)
    warnings: tuple[Diagnostic, ...] = field(default=(), converter=as_tuple)
    paths: tuple[str, ...] = field(default=(), converter=as_tuple)
    measuring: bool = False  # the run was given --measure or --results: measuring nothing is checking nothing
    rebound: Rebinding | None = None  # `check --device`: the device every spec was rebound to

    def count(self, status: str) -> int:
        return sum(1 for v in self.verdicts if v.status == status)

    @property
    def summary(self) -> dict[str, int]:
        return {"passed": self.count("pass"), "failed": self.count("fail"), "skipped": self.count("skip"),
                "errors": len(self.diagnostics)}

    @property
    def exit_code(self) -> int:
        """2 when any input is invalid, else 1 when any claim fails, else 5 when no claim was checked (none
        passed or failed: there were none, or every one was skipped) or when a run asked to measure checked no
        claim against a measurement, else 0."""
        if self.diagnostics:
            return EXIT_INVALID
        if self.count("fail"):
            return EXIT_FAILED
        if not self.count("pass") or (self.measuring and not self._measured()):
            return EXIT_NOTHING
        return EXIT_OK

    def _measured(self) -> bool:
        return any(v.source == "measured" and v.status != "skip" for v in self.verdicts)

    def summary_line(self) -> str:
        line = f"{self.count('pass')} passed, {self.count('fail')} failed"
        skipped = self.count("skip")
        return line + (f", {skipped} skipped" if skipped else "")

    def nothing_checked(self) -> str | None:
        """Why no claim was checked, in one line (`nothing checked: ...`); None when some claim was, or when
        the input is invalid (its errors say more)."""
        if self.exit_code != EXIT_NOTHING:
            return None
        if self.count("pass"):  # checked against the model, but a run asked to measure measured nothing
            return f"nothing measured: {self._why_unmeasured()}"
        if self.verdicts:
            claims = len({id(v.claim) for v in self.verdicts})
            first = self.verdicts[0]
            why = f"{first.source}: {first.reason or first.message}"
            reason = (f"every claim was skipped ({claims} claim{'s' * (claims != 1)}; the first: {why})"
                      if claims > 1 else f"its one claim was skipped ({why})")
        elif not self.files:
            where = _names(self.paths) if self.paths else "the paths given"
            reason = f"no .gpu files or Markdown gpu blocks under {where}"
        elif all(Path(f).suffix in (".md", ".markdown") for f in self.files):
            # a gpu block that holds no claim and no block at all read the same here: there is no claim to check
            reason = f"no claims in {_names(self.files)} (in ```gpu fences or <!-- gpu --> comments)"
        else:
            reason = f"no claims in {_names(self.files)}"
        if self.warnings:
            count = len(self.warnings)
            reason += f"; {count} warning{'s' * (count != 1)} may say why"
        return f"nothing checked: {reason}"


    def _why_unmeasured(self) -> str:
        skipped = [v for v in self.verdicts if v.source == "measured"]
        if not skipped:
            return ("no claim is about what a harness measures (a workload's time, or what follows from it), so "
                    "--measure and --results had nothing to check")
        claims = len({id(v.claim) for v in skipped})
        first = skipped[0]
        where = f"{first.claim.span.file}:{first.claim.span.line}"
        return (f"every measured claim was skipped ({claims} claim{'s' * (claims != 1)}; the first, {where}: "
                f"{first.reason or first.message})")


def _names(paths: tuple[str, ...], most: int = 3) -> str:
    shown = ["standard input" if p == "-" else p for p in paths[:most]]
    more = len(paths) - most
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
