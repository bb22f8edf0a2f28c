"""Bad input: syntax errors in words, 'did you mean', every semantic error of a file reported together."""
from conftest import H100, errors


def test_syntax_errors_name_line_and_column_and_say_what_could_come_next():
    [error] = errors(H100 + "x*2 on 4096² bf16 is ≈")
    assert error.code == "syntax"
    assert (error.span.line, error.span.column) == (2, 23)
    assert "expected" in error.message and "a number" in error.message
    assert "__ANON" not in error.message and "_NL" not in error.message


def test_unknown_device_suggests_the_closest_name():
    [error] = errors("device H10-SXM\n")
    assert error.code == "unknown-device"
    assert "H100-SXM" in error.help


def test_unknown_dtype_unit_and_metric_suggest_known_ones():
    found = errors(H100 + "x = bf61[4096]\ny = bf16[4]\nz = y * 2\nz.wavez = 3\nz.time ≈ 3 uss\n")
    assert [e.code for e in found] == ["unknown-dtype", "unknown-metric", "unknown-unit"]
    assert "bf16" in found[0].help and "waves" in found[1].help and "us" in found[2].help


def test_all_semantic_errors_of_a_file_are_reported_together_in_order():
    found = errors("device H100\nq = 1 µs + 1 B\nw = nope * 2\ndevice.smz = 1\n")
    assert [e.span.line for e in found] == [2, 3, 4]


def test_a_workload_needs_a_device():
    [error] = errors("x*2 on 4096² bf16 is ≈ 20 µs")
    assert error.code == "no-device"


def test_indentation_outside_a_block_is_an_error():
    [error] = errors(H100 + "device.sms = 132\n    device.sms = 132\n")
    assert error.code == "syntax" and "indentation" in error.message


def test_names_cannot_be_defined_twice():
    [error] = errors(H100 + "w = 1 GB\nw = 2 GB\n")
    assert error.code == "duplicate-name" and "line 2" in error.message


def test_a_claim_without_a_metric_is_refused():
    [error] = errors(H100 + "x*2 on 4096² bf16 is 62")
    assert error.code == "which-metric"


def test_a_block_larger_than_the_device_allows_is_refused_where_it_is_written():
    [error] = errors(H100 + "x*2 on 4096² bf16 with 2048 threads per block is memory-bound")
    assert error.code == "over-device-limit" and "1024" in error.message
    assert error.span.column == 24


def test_device_overrides_must_make_sense():
    found = errors("device foo from H100 with sms = 0.5\ndevice bar from H100 with hbm_bandwidth = 0 TB/s\n")
    assert [e.code for e in found] == ["bad-field", "bad-field"]


def test_numbers_beyond_a_double_are_refused():
    [error] = errors(H100 + "x = bf16[4]\ny = x * 2\ny.waves = 1e400")
    assert error.code == "bad-number"


def test_control_characters_in_the_input_are_escaped_in_messages(tmp_path, capsys):
    from gpuspec.cli import main

    path = tmp_path / "s.gpu"
    path.write_text("device H100-SXM\u2028x\n", encoding="utf-8")
    assert main(["check", str(path)]) == 2
    out = capsys.readouterr().out
    assert "\u2028" not in out and "\\u2028" in out
