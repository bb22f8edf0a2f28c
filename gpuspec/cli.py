"""The command line: `gpuspec check`, `explain` and `devices`. Wiring only; exit codes come from the Report."""
from __future__ import annotations

import argparse
import sys

from gpuspec import __version__
from gpuspec.diagnostics import Diagnostic, SpecError
from gpuspec.report import EXIT_INVALID, EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_INVALID
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpuspec", description="Check the numbers written about GPU performance.")
    parser.add_argument("--version", action="version", version=f"gpuspec {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check every claim in spec files and folders")
    check.add_argument("paths", nargs="+", metavar="PATH",
                       help="a .gpu file, a folder to search for them, or - for standard input")
    check.add_argument("-v", "--verbose", action="store_true", help="list every claim, not only failures")
    check.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    check.set_defaults(run=_check)

    explain = commands.add_parser("explain", help="print how every metric of a spec is derived")
    explain.add_argument("target", metavar="FILE[:LINE]", help="a spec file, optionally with a line number")
    explain.set_defaults(run=_explain)

    devices = commands.add_parser("devices", help="list the device catalog, or show one device")
    devices.add_argument("name", nargs="?", metavar="NAME", help="a device name or alias")
    devices.set_defaults(run=_devices)

    models = commands.add_parser("models", help="list the LLM catalog, or show one model")
    models.add_argument("name", nargs="?", metavar="NAME", help="a model name or alias")
    models.set_defaults(run=_models)
    return parser


def _check(args) -> int:
    from gpuspec.pipeline import run_check

    report = run_check(args.paths)
    if args.format == "json":
        from gpuspec.report import json as json_report

        sys.stdout.write(json_report.render(report))
    else:
        from gpuspec.report import text as text_report

        sys.stdout.write(text_report.render(report, verbose=args.verbose))
    return report.exit_code


def _explain(args) -> int:
    from gpuspec import devices
    from gpuspec.pipeline import explain
    from gpuspec.report import explain as explain_report
    from gpuspec.report import text as text_report

    path, line = args.target, None
    head, _, tail = args.target.rpartition(":")
    if head and tail.isdigit():
        path, line = head, int(tail)
    try:
        explanations = explain(path, line)
    except SpecError as error:
        texts = {}
        try:
            texts[path] = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            pass
        for diagnostic in error.diagnostics:
            print("\n".join(text_report.error(diagnostic, texts)), file=sys.stderr)
        return EXIT_INVALID
    from gpuspec import models

    sys.stdout.write(explain_report.render(explanations, {**devices.references(), **models.references()}))
    return EXIT_OK


def _devices(args) -> int:
    from gpuspec import devices
    from gpuspec.diagnostics import did_you_mean
    from gpuspec.report import devices as devices_report

    if args.name is None:
        sys.stdout.write(devices_report.listing(devices.catalog()))
        return EXIT_OK
    device = devices.lookup(args.name)
    if device is None:
        from gpuspec.report.text import error
        hint = did_you_mean(args.name, devices.known_names())
        print("\n".join(error(Diagnostic("unknown-device", f"unknown device `{args.name}`", None, hint), {})),
              file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(devices_report.detail(device, devices.references()))
    return EXIT_OK


def _models(args) -> int:
    from gpuspec import models
    from gpuspec.diagnostics import did_you_mean
    from gpuspec.report import devices as catalog_report

    if args.name is None:
        sys.stdout.write(catalog_report.model_listing(models.catalog()))
        return EXIT_OK
    model = models.lookup(args.name)
    if model is None:
        from gpuspec.report.text import error
        hint = did_you_mean(args.name, models.known_names())
        print("\n".join(error(Diagnostic("unknown-model", f"unknown model `{args.name}`", None, hint), {})),
              file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(catalog_report.model_detail(model, models.references()))
    return EXIT_OK
