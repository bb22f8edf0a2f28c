"""Errors as the command line prints them. What each error says, and where, is in tests/documents/*.md."""


def test_control_characters_in_the_input_are_escaped_in_messages(tmp_path, capsys):
    from gpuspec.cli import main

    path = tmp_path / "s.gpu"
    path.write_text("device H100-SXM\u2028x\n", encoding="utf-8")
    assert main(["check", str(path)]) == 2
    out = capsys.readouterr().out
    assert "\u2028" not in out and "\\u2028" in out
