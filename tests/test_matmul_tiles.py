"""A matmul's tile, when the spec writes one, is one a GPU kernel runs (kinds/matmul/resolve.py says the rule and
its sources): each side a multiple of 16 from 16 to 256, its double-buffered slices of A and B within the device's
shared memory. Anything else is an error at the tile, not a model of a kernel no one could run."""
from __future__ import annotations

import pytest

from gpuspec.api import check_text

MATMUL = "device H100-SXM\na = bf16[64, 8192]\nb = bf16[8192, 8192]\n"


def tile_errors(tile: str, head: str = MATMUL):
    report = check_text(head + f"c = a @ b with {tile} tiles\n", "t.gpu")
    return report, [(d.span.line, d.span.column, d.span.end_column, d.code) for d in report.diagnostics]


@pytest.mark.parametrize("tile", ["100000x100000", "3x5", "0x128", "128x0", "8x128", "128x8", "272x128",
                                  "128x136", "24x24", "999999x999999", "1x1"])
def test_a_tile_no_kernel_runs_is_an_error_at_the_tile(tile):
    report, found = tile_errors(tile)
    assert found == [(4, 11, 11 + len(f"with {tile} tiles"), "bad-tile")]
    (error,) = report.diagnostics
    assert f"no GPU kernel runs {tile} tiles" in error.message
    assert "multiples of 16 from 16 to 256" in error.message and "write `with " in error.help


@pytest.mark.parametrize("tile", ["16x16", "64x128", "128x128", "128x256", "256x128", "256x256", "48x80", "16×256"])
def test_the_tiles_kernels_run_are_taken(tile):
    report, found = tile_errors(tile)
    assert not found


def test_the_suggested_tile_is_the_nearest_one_a_kernel_runs():
    report, _ = tile_errors("100000x3")
    assert "write `with 256x16 tiles`" in report.diagnostics[0].help


def test_a_tile_must_fit_the_device_s_shared_memory():
    head = MATMUL + "device tiny from H100-SXM with shared_memory_per_block = 16 KiB\n"
    report, found = tile_errors("256x256", head)
    assert found == [(5, 11, 29, "bad-tile")]
    assert "keeps 32 KiB of A and B in shared memory" in report.diagnostics[0].message
    assert not tile_errors("128x128", head)[1]  # 2 × (128 + 128) × 32 B = 16 KiB: it fits
    # a device that says nothing of its shared memory is not held to it
    blank = ("device mine from none with sms = 100, hbm_bandwidth = 1 TB/s, tensor_bf16 = 100 TFLOP/s\n"
             "a = bf16[64, 8192]\nb = bf16[8192, 8192]\n")
    assert not tile_errors("256x256", blank)[1]


def test_the_default_tile_of_a_skinny_matmul_is_never_refused():
    report = check_text("device H100-SXM\na = bf16[1, 8192]\nb = bf16[8192, 3]\nc = a @ b is tile_m = 16, "
                        "tile_n = 16\n", "t.gpu")
    assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass", "pass"]


def test_a_bad_tile_in_markdown_and_in_a_block_is_located_where_it_is_written():
    document = "Prose.\n\n```gpu\n" + MATMUL + "c = a @ b with 3x5 tiles:\n    ≈ 20 µs\n    1 tiles\n```\n"
    (error,) = check_text(document, "post.md").diagnostics
    assert (error.span.line, error.span.column, error.code) == (7, 11, "bad-tile")
    indented = "* item\n\n  ```gpu\n  " + MATMUL.replace("\n", "\n  ") + "c = a @ b with 3x5 tiles\n  ```\n"
    (error,) = check_text(indented, "post.md").diagnostics
    assert (error.span.line, error.span.column, error.code) == (7, 13, "bad-tile")
