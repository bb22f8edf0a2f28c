"""The command line: `gpuspec check`, `explain`, `devices`, `plot`, `report` and the rest. Wiring only; exit codes
come from the Report (their table is report.EXIT_CODES)."""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading

from gpuspec.diagnostics import Diagnostic, SpecError
from gpuspec.report import (
    EXIT_CODES,
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_TERMINATED,
)
from gpuspec.report.safe import shown_line
from gpuspec.version import __version__

DEBUG = "GPUSPEC_DEBUG"  # set to 1 to see the traceback of an internal error

# Every command's exit statuses; each command's --help lists its own, in its words (_COMMANDS).
COMMAND_EXIT_CODES = f"""exit codes (`gpuspec COMMAND --help` says what each means for that command):
  {EXIT_OK}    done: every claim checked holds, nothing to reformat
  {EXIT_FAILED}    a claim fails (check, report); a file would change (fmt --check, fmt --diff); calibrate could
       not measure
  {EXIT_INVALID}    the input is invalid or the command is misused (errors win over failures), or the output
       could not be written
  {EXIT_INTERNAL}    an internal error in gpuspec (a bug: please report it; {DEBUG}=1 shows the traceback)
  {EXIT_NOTHING}    nothing was checked (check, report): no spec files or claims, or every claim skipped
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)
  {EXIT_TERMINATED}  terminated (SIGTERM: stopped as Ctrl-C stops it)"""


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` names; its exit status. Standard output and error are written through _Output: a
    write that fails ends nothing half way, and the status says it (_unwritten)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    _never_fail_to_encode()
    stdout, stderr = sys.stdout, sys.stderr
    out, err = _Output(stdout), _Output(stderr)
    sys.stdout, sys.stderr = out, err
    code: int | str | None = EXIT_INTERNAL
    stopped = False
    try:
        code = _main(argv)
    except SystemExit as stop:  # argparse's: usage errors (2), --help and --version (0)
        code, stopped = stop.code, True
    finally:
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = stdout, stderr
        if out.error is not None or err.error is not None:
            code = _unwritten(out.error, _named_command(argv), code)
            if out.error is not None:
                _discard(stdout)
            if err.error is not None:
                _discard(stderr)
    if stopped:
        raise SystemExit(code)
    return code


def _main(argv: list[str]) -> int:
    parser = _parser(_named_command(argv))
    args, unknown = parser.parse_known_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_INVALID
    if getattr(args, "target", "") is None:  # `explain -:3`: argparse takes what starts with `-` for an option
        stdin_lines = [item for item in unknown if item.startswith("-:")]
        if not stdin_lines:
            args.parser.error("the following arguments are required: FILE[:LINE]")
        args.target = stdin_lines[0]
        unknown.remove(args.target)
    if unknown:  # said with the subcommand's usage, not the top level's (argparse would give gpuspec's)
        args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    with _sigterm_as_ctrl_c() as terminated:
        code = _run(args)
    return EXIT_TERMINATED if terminated and code == EXIT_INTERRUPTED else code


def run() -> None:
    """The `gpuspec` command (and `python -m gpuspec`): main() on the process's arguments, then the process ends.

    When the interpreter's shutdown would only free memory (no atexit handler registered, no thread left to wait
    for, standard output and error flushed), the process ends at once with the exit status: tearing down the modules
    and the objects of a check took a third as long as the check of a cached spec itself, and more for large ones.
    Otherwise, or when a stream cannot be flushed, it exits as any Python program does.

    The cyclic garbage collector is off for the command (api turns it off while specs load and claims are checked,
    and its first collections after that went over every object made meanwhile, only to free nothing): the process
    is short, and reference counting frees what it drops."""
    import gc

    gc.disable()
    code = main()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001  (a broken pipe: the interpreter says so at exit, as it always did)
        sys.exit(code)
    import atexit

    callbacks = getattr(atexit, "_ncallbacks", None)
    alone = all(thread.daemon or thread is threading.main_thread() for thread in threading.enumerate())
    if callbacks is not None and callbacks() == 0 and alone and isinstance(code, int) and 0 <= code <= 255:
        os._exit(code)
    sys.exit(code)


class _Output:
    """Standard output (or error) as a command writes it: the first write or flush that fails (the reader closed
    the pipe: `gpuspec check | head -1`; a full disk: `> /dev/full`) is kept in `error`, and what is written after it
    is dropped, so the command runs to its end and its exit status stands (main then says what was lost)."""

    def __init__(self, stream):
        self._stream = stream
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        if self.error is None and self._stream is not None:
            try:
                return self._stream.write(text)
            except OSError as error:  # BrokenPipeError, ENOSPC, EIO
                self.error = error
        return len(text)

    def flush(self) -> None:
        if self.error is None and self._stream is not None:
            try:
                self._stream.flush()
            except OSError as error:
                self.error = error

    def __getattr__(self, name: str):  # isatty, encoding, fileno: the stream's own
        return getattr(self._stream, name)


def _unwritten(out: OSError | None, command: str | None, code):
    """The exit status of a command whose output could not all be written. A closed pipe is the reader's choice
    (`| head`): the command's own status stands. Any other failure to write standard output (a full disk) is said on
    standard error and exits 2 (as `check --output` and `report` do for a file they cannot write), unless the
    command's status already says something worse than a failing claim; stderr itself is not worth a status."""
    if out is None or isinstance(out, BrokenPipeError):
        return code
    try:
        print(shown_line(f"gpuspec{' ' + command if command else ''}: error: standard output could not be "
                         f"written ({out.strerror or out}): the output is incomplete"), file=sys.stderr)
        sys.stderr.flush()
    except Exception:  # noqa: BLE001  (stderr is broken too: the exit status still says it)
        pass
    return EXIT_INVALID if code in (EXIT_OK, EXIT_FAILED, EXIT_NOTHING, None) else code


def _discard(stream) -> None:
    """Send what `stream` still holds, and anything written to it later, to the null device: its descriptor is
    closed or full, and the interpreter's own flush at exit would otherwise print a traceback-like complaint and
    exit 120."""
    try:
        descriptor = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):  # not a file (a test's capture): nothing is pending
        return
    try:
        os.dup2(null, descriptor)
    except OSError:
        pass
    finally:
        os.close(null)


def _run(args) -> int:
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # a bug: never exit 1 (a failing claim) nor show a traceback unasked
        return _internal_error(error)


@contextlib.contextmanager
def _sigterm_as_ctrl_c():
    """SIGTERM (a CI job cancelled, `kill`) stops gpuspec as Ctrl-C does: harnesses stopped, temporary files
    removed, what finished reported. Yields a list that holds the signal once one came; a second SIGTERM is
    ignored while the first one's clean-up runs. Only the main thread can set a signal handler."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def stop(signum, frame):
        received.append(signum)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def _internal_error(error: Exception) -> int:
    """One line that says gpuspec failed (the traceback too with GPUSPEC_DEBUG=1); exit 3."""
    import traceback

    try:
        if os.environ.get(DEBUG, "") not in ("", "0"):
            for line in traceback.format_exc().rstrip("\n").split("\n"):
                print(shown_line(line), file=sys.stderr)
        reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        print(shown_line(f"gpuspec: internal error: {reason} (please report it; {DEBUG}=1 shows where)"),
              file=sys.stderr)
    except Exception:  # noqa: BLE001  (stderr itself is broken: the exit code still says what happened)
        pass
    return EXIT_INTERNAL


def _never_fail_to_encode() -> None:
    # Printers show a file name that is not UTF-8 escaped; anything else that holds one (an OS error's message)
    # is written with backslash escapes rather than ending the run in a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given `command` (the one the command line names: _named_command), only that
    command's own arguments are added, the others' being never read (adding them all took longer than checking a
    cached spec); every command is still listed, with its help."""
    parser = argparse.ArgumentParser(prog="gpuspec", description="Check the numbers written about GPU performance.",
                                     epilog=COMMAND_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"gpuspec {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, options, arguments, run in _COMMANDS:
        subparser = commands.add_parser(name, **options)
        if command is None or command == name:
            arguments(subparser)
        if run is not None:
            subparser.set_defaults(parser=subparser, run=run)
    return parser


def _named_command(argv: list[str]) -> str | None:
    """The command `argv` names, as argparse finds it: its first positional argument (gpuspec's own options take
    no value), or None when there is none."""
    for index, arg in enumerate(argv):
        if arg == "--":
            return argv[index + 1] if index + 1 < len(argv) else None
        if not arg.startswith("-"):
            return arg
    return None


def _check_arguments(check) -> None:
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="a .gpu file, a folder to search for them, or - for standard input (default: the paths "
                            "of [tool.gpuspec] in pyproject.toml, else the current folder)")
    check.add_argument("--stdin-filename", metavar="NAME",
                       help="the name standard input (-) is shown under; a .md or .markdown name reads it as "
                            "Markdown (its gpu blocks), any other as a spec")
    check.add_argument("-v", "--verbose", action="count", default=0,
                       help="list every claim, and each failure's whole derivation; -vv each passing claim's "
                            "derivation too")
    check.add_argument("-q", "--quiet", action="count", default=0,
                       help="only failures, errors and the summary; -qq prints nothing (the exit status says it; "
                            "--output still writes its report)")
    check.add_argument("--format", choices=("text", "json", "junit", "markdown", "github"),
                       help="output format (default: text, or `format` of [tool.gpuspec])")
    check.add_argument("--output", metavar="FILE", help="write the report to FILE (the summary still prints)")
    judged = check.add_argument_group("defaults (each wins over its key in [tool.gpuspec]; a spec's own lines win "
                                      "over both)")
    judged.add_argument("--tolerance", metavar="TOL",
                        help="the tolerance of ≈ claims in specs without `set tolerance`: 5%%, 2 µs (default 10%%)")
    judged.add_argument("--sources", metavar="NAMES",
                        help="what claims are checked against in specs without `set sources`: model, calibrated, "
                             "measured, separated by commas (default: the model and each source given)")
    judged.add_argument("--exclude", metavar="GLOB", action="append",
                        help="skip the files and folders this glob matches when searching folders (repeatable; "
                             "replaces `exclude` of [tool.gpuspec]); a file named is still checked")
    judged.add_argument("--markdown", metavar="GLOB", action="append",
                        help="search folders' Markdown files that this glob matches, and no others (repeatable; "
                             "--markdown '*' all of them, the default)")
    judged.add_argument("--no-markdown", action="store_true",
                        help="search folders for .gpu files alone (a Markdown file named is still read)")
    check.add_argument("--update", action="store_true",
                       help="rewrite each failing claim's number to the computed value, at the precision written")
    check.add_argument("--allow-nothing-checked", action="store_true",
                       help=f"exit {EXIT_OK}, not {EXIT_NOTHING}, when no claim was checked (for a hook given "
                            "whichever files changed, some without claims)")
    measuring = check.add_argument_group("measuring (the measured and calibrated sources)")
    measuring.add_argument("--measure", action="store_true", help="time every workload with generated harnesses")
    measuring.add_argument("--require-measure", action="store_true",
                           help="a measured claim that cannot be measured fails instead of being skipped")
    measuring.add_argument("--save-results", metavar="FILE", help="save what --measure measured, with provenance")
    measuring.add_argument("--results", metavar="FILE", action="append", default=[],
                           help="check against saved results, from any machine (repeat for several files)")
    measuring.add_argument("--profile", metavar="FILE", help="a calibration profile: the calibrated source")
    measuring.add_argument("--device", metavar="NAME",
                           help="rebind every spec to this catalog device (auto: the GPU --measure runs on), so "
                                "that model, calibrated and measured are for the GPU at hand")
    _harness_options(measuring)


def _fmt_arguments(fmt) -> None:
    fmt.add_argument("paths", nargs="+", metavar="PATH",
                     help="files or folders, or - to format standard input to standard output")
    fmt.add_argument("--stdin-filename", metavar="NAME",
                     help="the name standard input (-) is shown under; a .md or .markdown name formats its gpu "
                          "blocks")
    fmt.add_argument("--check", action="store_true",
                     help=f"change nothing; exit {EXIT_FAILED} if a file would change")
    fmt.add_argument("--diff", action="store_true", help="change nothing; print what would change")


def _init_arguments(init) -> None:
    pass


def _calibrate_arguments(calibrate) -> None:
    calibrate.add_argument("--out", metavar="FILE", required=True, help="where to write the profile (JSON)")
    _harness_options(calibrate)


def _explain_arguments(explain) -> None:
    explain.add_argument("target", metavar="FILE[:LINE]", nargs="?",
                         help="a spec file, optionally with a line number, or - (-:LINE) for standard input")
    explain.add_argument("--stdin-filename", metavar="NAME",
                         help="the name standard input (-) is shown under; a .md or .markdown name reads it as "
                              "Markdown (its gpu blocks)")
    _device_argument(explain, "explain the spec")


def _devices_arguments(devices) -> None:
    devices.add_argument("names", nargs="*", metavar="NAME",
                         help="a device name or alias; two or more are shown side by side, a column each")


def _device_argument(parser, what: str) -> None:
    parser.add_argument("--device", metavar="NAME",
                        help=f"{what} for this catalog device, as check --device checks them: each `device` "
                             "statement stands for it, and a spec that names none is for it (default: `device` of "
                             "[tool.gpuspec] for specs that name none)")


def _harness_arguments(harness) -> None:
    harness.add_argument("target", metavar="FILE[:LINE]", help="a spec file, optionally with a workload's line")
    _device_argument(harness, "write the programs")


def _models_arguments(models) -> None:
    models.add_argument("name", nargs="?", metavar="NAME", help="a model name or alias")


def _plot_arguments(plot) -> None:
    pictures = plot.add_subparsers(dest="picture", metavar="PICTURE", required=True)
    roofline = pictures.add_parser("roofline", help="the device's roofline with each workload as a point",
                                   epilog=_PLOT_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    roofline.add_argument("targets", nargs="+", metavar="FILE[:LINE]", help="spec files, or one workload's line")
    roofline.add_argument("--profile", metavar="FILE", help="a calibration profile: draw the calibrated source too")
    roofline.add_argument("--results", metavar="FILE", action="append", default=[],
                          help="saved results: draw the measured source too (repeat for several files)")
    roofline.add_argument("--own-axes", action="store_true", help="each device's panel on its own axis ranges "
                          "(default: one range for all, so that devices compare by eye)")
    timeline = pictures.add_parser("timeline", help="a launch stream as the queue plays it out: host and GPU",
                                   epilog=_PLOT_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    timeline.add_argument("targets", nargs="+", metavar="FILE[:LINE]", help="a spec file, or one stream's line")
    for picture, run in ((roofline, _plot_roofline), (timeline, _plot_timeline)):
        picture.add_argument("--out", metavar="FILE", required=True, help="the picture to write: .png or .svg")
        _device_argument(picture, "draw the workloads")
        picture.set_defaults(parser=picture, run=run)


def _report_arguments(report) -> None:
    report.add_argument("paths", nargs="*", metavar="PATH",
                        help="a .gpu file or a folder to search for them (default: the paths of [tool.gpuspec] in "
                             "pyproject.toml, else the current folder)")
    report.add_argument("--out", metavar="FILE", required=True, help="the report to write: .html or .md")
    report.add_argument("--format", choices=("html", "markdown"), help="the format (default: from --out's suffix)")
    report.add_argument("--profile", metavar="FILE", help="a calibration profile: the calibrated source")
    report.add_argument("--results", metavar="FILE", action="append", default=[],
                        help="check against saved results (repeat for several files)")
    _device_argument(report, "check the specs")


_MOST_SECONDS = 1_000_000  # about 11 days: beyond it a wait overflows what the OS takes (select, poll)


def _seconds(text: str) -> float:
    """A number of seconds as --timeout and --budget take it: finite, above 0 and at most _MOST_SECONDS (the
    error is argparse's, naming the option)."""
    import math

    from gpuspec.text import escaped

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= _MOST_SECONDS:  # nan, inf, 0 and below
        raise argparse.ArgumentTypeError(f"takes a number of seconds above 0 and at most {_MOST_SECONDS} (such as "
                                         f"600 or 0.5), not `{escaped(text)}`")
    return value


def _harness_options(group) -> None:
    group.add_argument("--timeout", type=_seconds, default=600.0, metavar="SECONDS",
                       help="stop a spec's harness after this long (default 600)")
    group.add_argument("--budget", type=_seconds, default=2.0, metavar="SECONDS",
                       help="seconds of sampling per workload, at most (default 2)")
    group.add_argument("--harness-device", choices=("cuda", "cpu"), default="cuda",
                       help="cpu runs the kernels under the Triton interpreter (to rehearse without a GPU)")
    group.add_argument("--small", action="store_true", help="shrink every tensor (for rehearsals)")
    group.add_argument("--fake-timer", action="store_true", help="check results but report fixed times (for tests)")
    group.add_argument("--fake-gpu", metavar="NAME", help="with --fake-timer: the GPU the report names")


def _measure_options(args):
    from gpuspec.measure import Options

    return Options(device=args.harness_device, timeout=args.timeout, budget=args.budget, small=args.small,
                   fake_timer=args.fake_timer, fake_gpu=args.fake_gpu)


def _check(args) -> int:
    from gpuspec.api import Interrupted, Sources, run_check

    if args.save_results and not args.measure:
        return _misuse(args, "--save-results saves what --measure measures; add --measure")
    if args.quiet and args.verbose:
        return _misuse(args, "-q leaves out what -v adds; use one or the other")
    if args.stdin_filename is not None and "-" not in args.paths:
        return _misuse(args, "--stdin-filename names standard input; add - to the paths")
    if args.update and "-" in args.paths:  # there is no file to write the new numbers to
        return _misuse(args, "--update rewrites files, and standard input (-) is not one; give the file's path")
    if args.update and args.device is not None:  # it would write another device's numbers under the spec's own
        return _misuse(args, "--update rewrites claims for the device each spec names, and --device checks "
                             "them for another; use one or the other")
    configured = _configured(args)
    if isinstance(configured, int):
        return configured
    defaults, search = configured
    if args.stdin_filename is not None:
        import attrs

        search = attrs.evolve(search, stdin_name=args.stdin_filename)
    sources = Sources(measure=_measure_options(args) if args.measure else None, results=tuple(args.results),
                      profile=args.profile, save_results=args.save_results, require_measure=args.require_measure,
                      progress=_progress(args), device=args.device, placed=args.placed)
    silent = args.quiet >= 2  # -qq: the exit status alone
    try:
        report = run_check(args.paths, sources, defaults, search)
    except Interrupted as stop:  # Ctrl-C while measuring: what was checked by then, and exit 130
        if not silent:
            sys.stdout.write(_shown(stop.report, args, to_terminal=True))
            print(shown_line(f"interrupted: {stop.note}"), file=sys.stderr)
        return EXIT_INTERRUPTED
    rendered = _shown(report, args, to_terminal=not args.output)
    if silent and not args.output:
        rendered = ""
    if args.output:
        from gpuspec.files import WriteError, write_atomically

        try:
            write_atomically(args.output, rendered)
        except WriteError as error:
            print(shown_line(f"gpuspec check: {error}"), file=sys.stderr)
            return EXIT_INVALID
        if not silent:
            print(report.summary_line())
    else:
        sys.stdout.write(rendered)
    if report.nothing_checked() and (args.output or args.format != "text") and not silent:  # else the report says it
        print(shown_line(report.nothing_checked()), file=sys.stderr)
    # what --update did is a notice: beside a text report on stdout, else on stderr (stdout is the JSON, XML...)
    code = _update(report, silent, sys.stdout if args.format == "text" else sys.stderr) if args.update else \
        report.exit_code
    if code == EXIT_OK and report.exit_code == EXIT_NOTHING:  # --update had nothing to rewrite
        code = EXIT_NOTHING
    return EXIT_OK if code == EXIT_NOTHING and args.allow_nothing_checked else code


def _configured(args):
    """[tool.gpuspec] of the nearest pyproject.toml, under what the command line gave (which wins): the paths,
    format, profile and results set into `args`; returns the run's defaults and how to search folders, or exit 2
    after printing what is wrong with the configuration."""
    if args.markdown and args.no_markdown:
        return _misuse(args, "--markdown names the Markdown files to search and --no-markdown searches none; use "
                             "one or the other")
    found = _configuration()
    if isinstance(found, int):
        return found
    markdown = False if args.no_markdown else args.markdown
    try:
        found = found.under(args.paths, args.format, args.profile, args.results, markdown=markdown,
                            exclude=args.exclude, tolerance=args.tolerance,
                            sources=[args.sources] if args.sources is not None else None)
    except SpecError as error:
        return _misuse(args, *(problem.message + (f" ({problem.help})" if problem.help else "")
                               for problem in error.diagnostics))
    args.paths = list(found.paths) or ["."]
    args.format = found.format or "text"
    args.profile = found.profile
    args.results = list(found.results)
    args.placed = found.placed  # where the table named the profile and results, for their errors
    return found.defaults, found.search  # a device for specs that name none; a tolerance for those that set none


def _configuration():
    """[tool.gpuspec] of the nearest pyproject.toml, or exit 2 after printing what is wrong with it."""
    from gpuspec import config

    try:
        return config.load()
    except SpecError as error:
        return _print_errors(error, error.diagnostics[0].span.file)


def _device_given(args, defaults):
    """The defaults with `--device` (explain, harness, plot: nothing measured, so no `auto`) as the device of specs
    that name none, and that device to rebind every spec to (None without --device); or exit 2 saying what is
    wrong."""
    import attrs

    from gpuspec import devices

    if args.device is None:
        return defaults, None
    if args.device.strip().lower() == "auto":  # no GPU is looked for: nothing is measured here
        return _misuse(args, f"--device auto is the GPU that check --measure runs on; {args.parser.prog} measures "
                             "nothing, so name the device (`gpuspec devices` lists them)")
    try:
        rebound = devices.rebinding_target(args.device)
    except devices.NoSuchDevice as error:
        return _misuse(args, error.message + (f" ({error.help})" if error.help else ""))
    return attrs.evolve(defaults, device=rebound), rebound


def _run_of(args, paths=()):
    """What [tool.gpuspec] gives a picture or report, under the command's own options by the rule check keeps
    (Config.under): (the configuration, pictures.Run), or exit 2 after saying what is wrong."""
    from gpuspec.pictures import Run

    found = _configuration()
    if isinstance(found, int):
        return found
    try:
        found = found.under(paths, profile=getattr(args, "profile", None), results=getattr(args, "results", ()))
    except SpecError as error:
        return _misuse(args, *(problem.message + (f" ({problem.help})" if problem.help else "")
                               for problem in error.diagnostics))
    if args.command == "report":  # rebound as check rebinds (api.load_rebound): a wrong name is a report's error
        return found, Run(found.defaults, found.search, None, args.device, found.placed)
    given = _device_given(args, found.defaults)
    if isinstance(given, int):
        return given
    defaults, device = given
    return found, Run(defaults, found.search, device, args.device, found.placed)


def _progress(args):
    """Where measuring says what it is doing: stderr, unless -qq."""
    if args.quiet >= 2:
        return lambda line: None
    return lambda line: print(shown_line(line), file=sys.stderr)


def _shown(report, args, to_terminal: bool) -> str:
    """The report in its format; the text one quieter with -q, and in colour when it goes to a terminal that
    wants colour (report.terminal). Machine formats are as they are."""
    rendered = _render(report, args.format, args.verbose)
    if args.format != "text":
        return rendered
    from gpuspec.report import terminal

    rendered = terminal.quiet(rendered, report) if args.quiet else terminal.trimmed(rendered)
    if to_terminal and terminal.wants_colour(sys.stdout, os.environ):
        rendered = terminal.coloured(rendered, report)
    return rendered


def _stderr(text: str) -> None:
    """Write errors, warnings or a complaint (a line or several) to stderr: their headers in colour when stderr
    wants colour, whatever stdout is."""
    from gpuspec.report import terminal

    if terminal.wants_colour(sys.stderr, os.environ):
        text = terminal.coloured_errors(text)
    print(text, file=sys.stderr)


def _render(report, format: str, verbose: bool) -> str:
    import importlib

    if format == "text":
        from gpuspec.report import text

        return text.render(report, verbose=verbose)
    return importlib.import_module(f"gpuspec.report.{format}").render(report)


def _update(report, silent: bool = False, notices=None) -> int:
    """Rewrite each failing claim's number (check --update); what was done is said on `notices` (stdout by
    default), refusals on stderr."""
    from gpuspec.api import update_failing

    updated = update_failing(report)
    if silent:
        return EXIT_INVALID if updated.refused else (report.exit_code if report.diagnostics else
                                                     EXIT_FAILED if updated.left else EXIT_OK)
    for refusal in updated.refused:
        print(shown_line(f"gpuspec check --update: {refusal}"), file=sys.stderr)
    changed, files = updated.changed, updated.files
    notes = [f"{updated.refused_claims} not written (see above)"] if updated.refused else []
    if updated.left:
        one = updated.left == 1
        notes.append(f"{updated.left} failing claim{'' if one else 's'} need{'s' if one else ''} a person (ranges, "
                     "bounds, arithmetic, other sources)")
    print(f"updated {changed} claim{'s' * (changed != 1)} in {files} file{'s' * (files != 1)}"
          + "".join(f"; {note}" for note in notes), file=notices or sys.stdout)
    if updated.refused:
        return EXIT_INVALID
    if report.diagnostics:
        return report.exit_code
    return EXIT_FAILED if updated.left else EXIT_OK


def _misuse(args, *messages: str) -> int:
    """A command used wrongly, said as argparse says it: the command's usage, then each mistake; exit 2."""
    args.parser.print_usage(sys.stderr)
    _stderr("\n".join(shown_line(f"{args.parser.prog}: error: {message}") for message in messages))
    return EXIT_INVALID


def _line_problem(command: str, path: str, line: int | None, spec, claims: bool = False) -> int | None:
    """Exit 2 with the words explain, harness and plot all use (api.line_problem) when `FILE:LINE` names no line of
    the file, or a line with nothing there (no workload; for explain, no claim either); None when it is fine."""
    from gpuspec.api import line_problem
    from gpuspec.text import line_count

    problem = line_problem(path, line, line_count(spec.document), spec.program, claims=claims)
    if problem is None:
        return None
    print(shown_line(f"gpuspec {command}: {problem.message}"), file=sys.stderr)
    return EXIT_INVALID


def _split_target(command: str, target: str) -> tuple[str, int | None] | int:
    """`FILE[:LINE]` (api.split_target), or exit 2 with what a FILE:LINE must be."""
    from gpuspec.api import TargetError, split_target

    try:
        return split_target(target)
    except TargetError as error:
        print(shown_line(f"gpuspec {command}: {error}"), file=sys.stderr)
        return EXIT_INVALID


def _print_errors(error: SpecError, path: str, spec_text: str | None = None) -> int:
    """Each error with its line of `path` (read once, however many errors; `spec_text` when it cannot be read
    again, as standard input cannot), on stderr; exit 2."""
    from gpuspec.report import text as text_report
    from gpuspec.text import read_leniently

    text = (spec_text if spec_text is not None else read_leniently(path)) if path else ""
    texts = {path: text} if text else {}  # a file that cannot be read has no line to show under its error
    documents = text_report.Documents(texts)
    for diagnostic in error.diagnostics:
        _stderr("\n".join(text_report.error(diagnostic, documents)))
    return EXIT_INVALID


def _harness(args) -> int:
    from gpuspec import harness
    from gpuspec.api import load_spec

    target = _split_target("harness", args.target)
    if isinstance(target, int):
        return target
    path, line = target
    configured = _run_of(args)  # the device and tolerance [tool.gpuspec] gives specs that set none, as for check
    if isinstance(configured, int):
        return configured
    _, run = configured
    try:
        spec = load_spec(path, run.defaults, run.device)
    except SpecError as error:
        return _print_errors(error, path)
    wrong = _line_problem("harness", path, line, spec)
    if wrong is not None:
        return wrong
    program = spec.program
    plans, refused = harness.plans(program, line)
    if not plans:
        reasons = "; ".join(dict.fromkeys(reason for _, reason in refused)) or "the file has no workloads"
        print(shown_line(f"{args.target}: nothing to measure: {reasons}"), file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(harness.render(path, plans, refused))
    return EXIT_OK


def _explain(args) -> int:
    from gpuspec import devices, llm_catalog
    from gpuspec.api import Spec, compile_text, explain_program, read
    from gpuspec.report import explain as explain_report
    from gpuspec.report import terminal

    target = _split_target("explain", args.target)
    if isinstance(target, int):
        return target
    path, line = target
    if args.stdin_filename is not None and path != "-":
        return _misuse(args, "--stdin-filename names standard input; give - as the file")
    name = args.stdin_filename or "<stdin>"
    shown = name if path == "-" else path
    try:
        source = read(path, name)
    except SpecError as error:
        return _print_errors(error, shown)
    found = _configuration()  # the device and tolerance [tool.gpuspec] gives specs that set none, as for check
    if isinstance(found, int):
        return found
    given = _device_given(args, found.defaults)
    if isinstance(given, int):
        return given
    defaults, rebound = given
    try:
        spec = Spec(source, compile_text(source, defaults, rebound))
    except SpecError as error:  # shown against the text read (standard input cannot be read again)
        return _print_errors(error, shown, _document_of(source))
    wrong = _line_problem("explain", shown, line, spec, claims=True)
    if wrong is not None:
        return wrong
    explanations = explain_program(spec.program, line)
    rendered = explain_report.render(explanations, {**devices.references(), **llm_catalog.references()})
    if terminal.wants_colour(sys.stdout, os.environ):
        rendered = terminal.coloured_explanation(rendered)
    sys.stdout.write(rendered)
    return EXIT_OK


def _document_of(source) -> str:
    return source.document if source.document is not None else source.text


def _devices(args) -> int:
    from gpuspec import devices
    from gpuspec.report import catalog as printer

    if len(args.names) < 2:
        return _catalog(args.names[0] if args.names else None, devices, "device", printer.listing, printer.detail)
    found = [devices.lookup(name) for name in args.names]
    unknown = [(place, name) for place, (name, device) in enumerate(zip(args.names, found), 1) if device is None]
    for place, name in unknown:
        _unknown_entry(devices, "device", name, f" (name {place} of {len(args.names)})")
    if unknown:
        return EXIT_INVALID
    sys.stdout.write(printer.side_by_side(list(dict.fromkeys(found)), devices.references()))
    return EXIT_OK


def _models(args) -> int:
    from gpuspec import llm_catalog
    from gpuspec.report import catalog as printer

    return _catalog(args.name, llm_catalog, "model", printer.model_listing, printer.model_detail)


def _catalog(name: str | None, catalog, kind: str, listing, detail) -> int:
    """`gpuspec devices` and `gpuspec models`: the whole catalog, or one entry with every fact and source."""
    if name is None:
        sys.stdout.write(listing(catalog.catalog()))
        return EXIT_OK
    entry = catalog.lookup(name)
    if entry is None:
        _unknown_entry(catalog, kind, name)
        return EXIT_INVALID
    sys.stdout.write(detail(entry, catalog.references()))
    return EXIT_OK


def _unknown_entry(catalog, kind: str, name: str, where: str = "") -> None:
    """A name the catalog lacks, with the close ones it has, on stderr."""
    from gpuspec.diagnostics import did_you_mean
    from gpuspec.report.text import error

    hint = did_you_mean(name, catalog.known_names())
    print("\n".join(error(Diagnostic(f"unknown-{kind}", f"unknown {kind} `{name}`{where}", None, hint), {})),
          file=sys.stderr)


def _plot_roofline(args) -> int:
    from gpuspec import pictures
    from gpuspec.api import split_target

    configured = _run_of(args)
    if isinstance(configured, int):
        return configured
    found, run = configured
    return _picture("plot roofline", lambda: pictures.roofline(
        [split_target(t) for t in args.targets], args.out, found.profile, found.results, args.own_axes, run))


def _plot_timeline(args) -> int:
    from gpuspec import pictures
    from gpuspec.api import split_target

    configured = _run_of(args)
    if isinstance(configured, int):
        return configured
    _, run = configured
    return _picture("plot timeline", lambda: pictures.timeline([split_target(t) for t in args.targets], args.out,
                                                               run))


def _report(args) -> int:
    from gpuspec import pictures

    configured = _run_of(args, args.paths)
    if isinstance(configured, int):
        return configured
    found, run = configured
    checked = {}

    def write() -> str:
        report = checked["report"] = pictures.report(list(found.paths) or ["."], args.out, args.format,
                                                     found.profile, found.results, run)
        errors = len(report.diagnostics)
        said = f", {errors} error{'s' * (errors != 1)}" if errors else ""
        return f"{report.summary_line()}{said}; report written to {args.out}"

    # Not written: 2. Written: check's exit code (1 when a claim fails, 5 when none was checked).
    code = _picture("report", write)
    if code != EXIT_OK:
        return code
    report = checked["report"]
    if report.nothing_checked():
        print(shown_line(report.nothing_checked()), file=sys.stderr)
    return report.exit_code


def _picture(command: str, make) -> int:
    """Run a picture command: its line on success, else its error in words (exit 2)."""
    from gpuspec.api import TargetError
    from gpuspec.pictures import PictureError
    from gpuspec.plot.select import SelectionError

    try:
        print(shown_line(make()))
    except (PictureError, SelectionError, TargetError) as error:
        print(shown_line(f"gpuspec {command}: {error}"), file=sys.stderr)
        return EXIT_INVALID
    except SpecError as error:
        span = error.diagnostics[0].span if error.diagnostics else None
        return _print_errors(error, span.file if span else "")
    return EXIT_OK


def _init(args) -> int:
    from pathlib import Path

    from gpuspec import starter
    from gpuspec.files import AlreadyThere, WriteError, write_new

    path = Path(starter.SPEC_PATH)
    try:
        path.parent.mkdir(exist_ok=True)
        write_new(path, starter.SPEC)
    except AlreadyThere as there:
        print(shown_line(f"gpuspec init: {there}"), file=sys.stderr)
        return EXIT_INVALID
    except (WriteError, OSError) as error:  # OSError: `specs` is a file, or the folder cannot be made
        reason = error if isinstance(error, WriteError) else f"cannot make {path.parent}: {error.strerror or error}"
        print(shown_line(f"gpuspec init: {reason}"), file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(starter.instructions())
    return EXIT_OK


def _calibrate(args) -> int:
    from gpuspec.measure import availability, calibrate

    options = _measure_options(args)
    reason = availability(options)
    if reason:
        print(shown_line(f"gpuspec calibrate: {reason}"), file=sys.stderr)
        return EXIT_INVALID
    try:
        profile = calibrate(args.out, options)
    except RuntimeError as error:
        print(shown_line(f"gpuspec calibrate: {error}"), file=sys.stderr)
        return EXIT_FAILED
    width = max(map(len, profile.facts), default=0)
    for name, value in profile.facts.items():
        print(f"{name:{width}} {value:.4g}")
    if profile.unmeasured:  # each with its reason in the file; the published profile gives them
        print(f"not measured ({len(profile.unmeasured)}; the device's published profile gives them, the file says "
              f"why): {', '.join(profile.unmeasured)}")
    # the GPU's name is what the driver or a profile said: shown, never acted on
    print(shown_line(f"profile of {profile.gpu or 'this machine'} written to {args.out}"))
    return EXIT_OK


def _fmt(args) -> int:
    from gpuspec.api import format_file, spec_files
    from gpuspec.files import WriteError
    from gpuspec.fmt import FormatError

    # Every line that holds a path or spec text goes through shown_line: no control character, bidirectional
    # mark or CI workflow command (`::error`, `##[`) from a file's name or text acts on what shows it.
    if "-" in args.paths:
        if len(args.paths) > 1:
            return _misuse(args, "- (standard input) is formatted to standard output, alone; give it without "
                                 "other paths")
        return _fmt_stdin(args)
    if args.stdin_filename is not None:
        return _misuse(args, "--stdin-filename names standard input; give - as the path")
    files, problems = spec_files(args.paths)
    for problem in problems:
        print(shown_line(f"gpuspec fmt: {problem.message}"), file=sys.stderr)
    changed, failed = 0, bool(problems)
    for path in files:
        shown = str(path)
        try:  # read as `gpuspec check` reads it
            formatted = format_file(path)
        except FormatError as error:
            print(shown_line(f"gpuspec fmt: {error}"), file=sys.stderr)
            failed = True
            continue
        if not formatted.changed:
            continue
        changed += 1
        if args.diff:
            sys.stdout.write(_fmt_diff(formatted.read.text, formatted.text, shown))
        elif args.check:
            print(shown_line(f"would reformat {shown}"))
        else:
            try:
                formatted.write()
            except WriteError as error:
                print(shown_line(f"gpuspec fmt: {error}"), file=sys.stderr)
                failed = True
                continue
            print(shown_line(f"reformatted {shown}"))
    if failed:
        return EXIT_INVALID
    if args.check or args.diff:
        return EXIT_FAILED if changed else EXIT_OK
    return EXIT_OK


def _fmt_stdin(args) -> int:
    """`fmt -`: the formatted text on standard output (as given when it is already formatted); with --check or
    --diff, only whether (or how) it would change."""
    from gpuspec.api import format_stdin
    from gpuspec.fmt import FormatError

    name = args.stdin_filename or "<stdin>"
    try:
        formatted = format_stdin(name)
    except FormatError as error:
        print(shown_line(f"gpuspec fmt: {error}"), file=sys.stderr)
        return EXIT_INVALID
    if args.diff:
        sys.stdout.write(_fmt_diff(formatted.read.text, formatted.text, name) if formatted.changed else "")
    elif args.check:
        if formatted.changed:
            print(shown_line(f"would reformat {name}"))
    else:
        sys.stdout.write(formatted.text)  # spec text, as written: it is the output asked for
    return EXIT_FAILED if formatted.changed and (args.check or args.diff) else EXIT_OK


def _fmt_diff(before: str, formatted: str, shown: str) -> str:
    """A unified diff of the lines (each through shown_line, so it prints as it reads and runs nothing in a CI
    log); a file whose only change is its line breaks (mixed ones made one kind) says so."""
    import difflib

    from gpuspec.text import newline_of, normalized

    def lines(text: str) -> list[str]:  # split at line breaks only (splitlines would split at U+2028 too)
        return [line + "\n" for line in text.removesuffix("\n").split("\n")] if text else []

    diff = "".join(shown_line(line.rstrip("\n")) + "\n" for line in difflib.unified_diff(
        lines(before), lines(normalized(formatted)), shown, f"{shown} (formatted)"))
    return diff or shown_line(f"{shown}: every line break becomes {newline_of(formatted)}") + "\n"


def _exit_codes(*own: tuple[int, str]) -> str:
    """A command's exit statuses for its --help: its own (status, meaning) pairs, then those every command shares
    (misuse, an internal error, Ctrl-C, SIGTERM), aligned as check's table (report.EXIT_CODES) is."""
    shared = ((EXIT_INTERNAL, f"an internal error in gpuspec (a bug: please report it; {DEBUG}=1 shows the "
                              "traceback)"),
              (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"), (EXIT_TERMINATED, "terminated (SIGTERM: stopped as Ctrl-C "
                                                                            "stops it)"))
    import textwrap

    rows = sorted({code: words for code, words in (*own, *shared)}.items())
    return "exit codes:\n" + "\n".join(textwrap.fill(words, 116, initial_indent=f"  {code:<4} ",
                                                      subsequent_indent=" " * 7) for code, words in rows)


_UNWRITTEN = "or standard output could not be written (a full disk; a pipe its reader closed keeps the status)"
_CHECK_EXIT_CODES = f"{EXIT_CODES}\n(a report that could not be written, to --output or stdout: {EXIT_INVALID})"
_REPORT_EXIT_CODES = f"{EXIT_CODES}\n(a report that could not be written: {EXIT_INVALID})"
_FMT_EXIT_CODES = _exit_codes(
    (EXIT_OK, "every file is laid out (or was rewritten so); with --check or --diff, none would change"),
    (EXIT_FAILED, "with --check or --diff: a file would change"),
    (EXIT_INVALID, f"a file cannot be read, parsed or written, or the command is misused, {_UNWRITTEN}"))
_INIT_EXIT_CODES = _exit_codes(
    (EXIT_OK, "the starter spec was written, and the snippets printed"),
    (EXIT_INVALID, f"specs/example.gpu is there already, or cannot be written, {_UNWRITTEN}"))
_CALIBRATE_EXIT_CODES = _exit_codes(
    (EXIT_OK, "the profile was written"),
    (EXIT_FAILED, "calibration could not measure (a harness failed)"),
    (EXIT_INVALID, f"nothing can measure here (no GPU, no torch), or the command is misused, {_UNWRITTEN}"))
_EXPLAIN_EXIT_CODES = _exit_codes(
    (EXIT_OK, "explained"),
    (EXIT_INVALID, f"the spec is invalid, FILE:LINE names no line or nothing on it, or the command is misused, "
                   f"{_UNWRITTEN}"))
_CATALOG_EXIT_CODES = _exit_codes(
    (EXIT_OK, "shown"),
    (EXIT_INVALID, f"a name the catalog does not hold, or the command is misused, {_UNWRITTEN}"))
_HARNESS_EXIT_CODES = _exit_codes(
    (EXIT_OK, "the program was printed"),
    (EXIT_INVALID, f"the spec is invalid, FILE:LINE names no line or no workload, nothing there can be measured, "
                   f"or the command is misused, {_UNWRITTEN}"))
_PLOT_EXIT_CODES = _exit_codes(
    (EXIT_OK, "the picture was written"),
    (EXIT_INVALID, f"the spec is invalid, nothing there can be drawn, matplotlib is missing, the picture cannot be "
                   f"written, or the command is misused, {_UNWRITTEN}"))

# Each command: its name, how it is listed (add_parser's options: its help and the exit statuses its own --help
# lists), its arguments, and what runs it (None for plot, whose pictures say).
_RAW = argparse.RawDescriptionHelpFormatter
_COMMANDS = (
    ("check", {"help": "check every claim in spec files and folders", "epilog": _CHECK_EXIT_CODES,
               "formatter_class": _RAW}, _check_arguments, _check),
    ("fmt", {"help": "lay out spec files (and Markdown gpu blocks) in the canonical way", "epilog": _FMT_EXIT_CODES,
             "formatter_class": _RAW}, _fmt_arguments, _fmt),
    ("init", {"help": "write a starter spec (specs/example.gpu) and print the pre-commit entry and a CI job to copy; "
                      "nothing is overwritten", "epilog": _INIT_EXIT_CODES, "formatter_class": _RAW},
     _init_arguments, _init),
    ("calibrate", {"help": "measure this GPU's ceilings into a profile", "epilog": _CALIBRATE_EXIT_CODES,
                   "formatter_class": _RAW}, _calibrate_arguments, _calibrate),
    ("explain", {"help": "print how every metric of a spec is derived", "epilog": _EXPLAIN_EXIT_CODES,
                 "formatter_class": _RAW}, _explain_arguments, _explain),
    ("devices", {"help": "list the device catalog, show one device, or compare several",
                 "epilog": _CATALOG_EXIT_CODES, "formatter_class": _RAW}, _devices_arguments, _devices),
    ("harness", {"help": "print the measuring program of a spec (or of one workload)", "epilog": _HARNESS_EXIT_CODES,
                 "formatter_class": _RAW}, _harness_arguments, _harness),
    ("models", {"help": "list the LLM catalog, or show one model", "epilog": _CATALOG_EXIT_CODES,
                "formatter_class": _RAW}, _models_arguments, _models),
    ("plot", {"help": "draw the roofline or a launch timeline (needs the plot extra)", "epilog": _PLOT_EXIT_CODES,
              "formatter_class": _RAW}, _plot_arguments, None),
    ("report", {"help": "write one HTML or Markdown file: every claim and source, failures first, with the pictures",
                "epilog": _REPORT_EXIT_CODES, "formatter_class": _RAW}, _report_arguments, _report),
)
