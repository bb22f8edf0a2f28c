"""`gpuspec --help` and `gpuspec check --help` list the exit statuses, exactly those the command line returns."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gpuspec import cli

CLI_SOURCE = Path(cli.__file__).read_text(encoding="utf-8")


def defined_codes() -> set[int]:
    return {value for name, value in vars(cli).items() if name.startswith("EXIT_") and isinstance(value, int)}


def listed_codes(help_text: str) -> set[int]:
    table = help_text.split("exit codes", 1)[1]
    return {int(code) for code in re.findall(r"^  (\d+) +\S", table, re.MULTILINE)}


def help_of(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [(), ("check",)], ids=["gpuspec", "check"])
def test_help_lists_exactly_the_exit_codes_the_command_line_defines(capsys, argv):
    assert listed_codes(help_of(capsys, *argv)) == defined_codes() == {0, 1, 2, 3, 5, 130, 143}


def returned(value: ast.expr | None) -> list[ast.expr]:
    """What a return statement's value may be: each branch of a conditional expression."""
    if isinstance(value, ast.IfExp):
        return returned(value.body) + returned(value.orelse)
    return [value] if value is not None else []


def test_the_command_line_returns_only_named_exit_codes():
    # a literal status in a return would be one the help cannot be kept in step with
    literals = [node.lineno for node in ast.walk(ast.parse(CLI_SOURCE)) if isinstance(node, ast.Return)
                for value in returned(node.value) if isinstance(value, ast.Constant)
                and isinstance(value.value, int) and not isinstance(value.value, bool)]
    assert literals == []
    assert returned(ast.parse("return 1 if x else EXIT_OK").body[0].value)[0].value == 1  # the walk sees them


def test_a_command_given_no_subcommand_prints_help_and_exits_two(capsys):
    assert cli.main([]) == cli.EXIT_INVALID
    assert "exit codes" in capsys.readouterr().out


def test_the_readme_table_lists_the_same_exit_codes():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Exit codes", 1)[1].split("\n\n", 2)[1]
    assert {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.MULTILINE)} == defined_codes()


# What each command can exit with: every command lists its own, and no code cli.py does not define
OWN_CODES = {
    ("check",): {0, 1, 2, 3, 5, 130, 143}, ("report",): {0, 1, 2, 3, 5, 130, 143},
    ("fmt",): {0, 1, 2, 3, 130, 143}, ("calibrate",): {0, 1, 2, 3, 130, 143},
    ("init",): {0, 2, 3, 130, 143}, ("explain",): {0, 2, 3, 130, 143}, ("devices",): {0, 2, 3, 130, 143},
    ("models",): {0, 2, 3, 130, 143}, ("harness",): {0, 2, 3, 130, 143}, ("plot",): {0, 2, 3, 130, 143},
    ("plot", "roofline"): {0, 2, 3, 130, 143}, ("plot", "timeline"): {0, 2, 3, 130, 143},
}


def test_every_command_is_listed_here():
    assert {name for name, *_ in cli._COMMANDS} == {argv[0] for argv in OWN_CODES}


@pytest.mark.parametrize("argv", sorted(OWN_CODES), ids=" ".join)
def test_each_commands_help_lists_its_exit_codes(capsys, argv):
    shown = help_of(capsys, *argv)
    listed = listed_codes(shown)
    assert listed == OWN_CODES[argv] and listed <= defined_codes()
    table = shown.split("exit codes", 1)[1]
    assert all(len(line) <= 120 for line in table.splitlines())
    assert re.search(rf"^  {cli.EXIT_INVALID} +.*\S", table, re.MULTILINE)  # each code says what it means
