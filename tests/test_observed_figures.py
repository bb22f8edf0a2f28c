"""`observed ...`: a published or measured figure attached to a workload, and what the model derives from it."""
import attrs
import pytest
from conftest import H100, errors, run, verdicts

from gpuspec import model
from gpuspec.api import compile_text
from gpuspec.fmt import format_text
from gpuspec.harness import workload_key
from gpuspec.text import SpecText

A100 = "device A100-80GB\n"
X = 4096 * 4096 * 2  # bytes of a 4096² bf16 tensor


def workload(text: str, name: str):
    program = compile_text(SpecText("t.gpu", text))
    return next(w for _, statement, w in program.workloads if statement.startswith(name))


def test_an_observed_time_gives_the_bandwidth_and_utilization_it_implies():
    w = workload(H100 + "x = bf16[4096, 4096]\ny = x * 2 observed 25 µs\n", "y")
    e = model.estimate(w)
    assert e["observed_time"].number == pytest.approx(25e-6)
    assert e["observed_bandwidth"].number == pytest.approx(2 * X / 25e-6)
    assert e["observed_mbu"].number == pytest.approx(2 * X / 25e-6 / 3.35e12)
    assert e["observed_flop_rate"].number == pytest.approx(4096 * 4096 / 25e-6)
    assert e["observed_vs_model"].number == pytest.approx(25e-6 / e["time"].number)
    assert "observed_time = observed = 25.0 µs" in e["observed_time"].derivation()


def test_a_token_rate_on_a_decode_step_is_one_step_per_token_of_the_batch():
    w = workload(A100 + "s = decode llama2-7b, batch 4 compiled observed 400 tokens/s\n", "s")
    e = model.estimate(w)
    assert e["observed_time"].number == pytest.approx(4 / 400)
    assert e["observed_tokens_per_s"].number == pytest.approx(400)
    assert e["observed_bandwidth"].number == pytest.approx(e["bytes_moved"].number * 100)
    assert e["observed_mbu"].number == pytest.approx(e["bytes_moved"].number * 100 / 2.039e12)


def test_a_flop_rate_is_per_gpu():
    w = workload(H100 + "t = train llama3-8b, batch 8, context 4096, gpus 2 observed 400 TFLOP/s\n", "t")
    e = model.estimate(w)
    assert e["observed_mfu"].number == pytest.approx(400e12 / 989.4e12)
    assert e["observed_time"].number == pytest.approx(e["flops"].number / 2 / 400e12)


def test_a_collective_bandwidth_is_the_algorithm_bandwidth():
    w = workload(H100 + "ar = all_reduce(8 GB) across 8 GPUs over nvlink observed 275 GB/s\n", "ar")
    e = model.estimate(w)
    assert e["observed_time"].number == pytest.approx(8e9 / 275e9)
    assert e["observed_algbw"].number == pytest.approx(275e9)
    assert e["observed_busbw"].number == pytest.approx(275e9 * 2 * 7 / 8)
    assert "observed_mbu" not in e  # a collective's bytes are not HBM traffic


def test_an_observation_does_not_change_what_is_measured():
    plain = workload(H100 + "x = bf16[4096, 4096]\ny = x * 2\n", "y")
    observed = attrs.evolve(plain, observed=workload(H100 + "x = bf16[4096, 4096]\ny = x * 2 observed 9 µs\n",
                                                     "y").observed)
    assert observed != plain  # two observations imply different things: their estimates are apart
    assert workload_key("y", observed) == workload_key("y", plain)
    assert model.estimate(plain) is not model.estimate(observed)


def test_observed_is_still_a_name_where_no_workload_option_can_follow():
    assert [v.status for v in verdicts(H100 + "observed = 3 ms\nobserved * 2 = 6 ms\n")] == ["pass"]


def test_the_canonical_layout_keeps_the_observation():
    text = A100 + "g = decode llama2-7b,batch 1  observed  107 tokens/s\n"
    assert format_text(text) == A100 + "g = decode llama2-7b, batch 1 observed 107 tokens/s\n"
    assert not run(format_text(text)).diagnostics


# --- every figure each kind takes ---------------------------------------------------------------------------------

def _readme_figure_table() -> dict[str, set[str]]:
    """README's table of the figures each kind takes: its row words -> the figures ticked."""
    from conftest import ROOT

    lines = (ROOT / "README.md").read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("| kind | time | tokens/s |"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = {header[i] for i, cell in enumerate(cells) if i and cell == "✓"}
    return rows


def test_readme_lists_every_figure_each_kind_takes():
    from gpuspec import kinds

    rows = _readme_figure_table()
    row_of = {"elementwise": "elementwise, matmul, row-wise, attention", "matmul": "elementwise, matmul, row-wise, "
              "attention", "rowwise": "elementwise, matmul, row-wise, attention",
              "attention": "elementwise, matmul, row-wise, attention", "stream": "stream (`N launches of W`)",
              "decode": "decode and prefill steps", "training": "training step", "collective": "collective"}
    assert set(row_of) == {kind.name for kind in kinds.KINDS}
    for kind in kinds.KINDS:
        assert rows[row_of[kind.name]] == set(kind.figures), kind.name
    assert set().union(*rows.values()) <= set(__import__("gpuspec.kinds.kind", fromlist=["FIGURES"]).FIGURES)


@pytest.mark.parametrize("head, figure", [
    ("x = bf16[4096, 4096]\ny = x * 2", ("25 µs", "30 TFLOP/s", "2.5 TB/s", "2% MFU", "60% MBU")),
    ("a = bf16[4096, 4096]\ny = a @ a", ("1 ms", "600 TFLOP/s", "70% MFU", "10% MBU")),
    ("x = bf16[4096, 4096]\ny = softmax(x)", ("60 µs", "80% MBU")),
    ("q = bf16[8, 16, 1024, 128]\ny = attention(q, q, q) fused", ("3 ms", "740 TFLOP/s", "50% MFU")),
    ("x = bf16[1024]\nz = x * 2\ny = 1000 launches of z", ("5 ms", "250,000 launches/s", "20,000 kernels/s",
                                                           "9 GB/s", "1% MBU", "1% MFU")),
    ("y = decode llama3-8b, batch 1", ("107 tokens/s", "9.35 ms", "1.4 TB/s", "5 TFLOP/s", "69% MBU", "1% MFU",
                                       "12,000 launches/s")),
    ("y = train llama3-8b, batch 8, context 4096, gpus 8", ("400 TFLOP/s", "6.75 s", "100 tokens/s", "40% MFU")),
    ("y = all_reduce(8 GB) across 8 GPUs over nvlink", ("275 GB/s", "4 ms", "82% of line rate")),
])
def test_every_kind_takes_each_of_its_figures_and_implies_a_time(head, figure):
    for written in figure:
        text = H100 + f"{head} observed {written}\n"
        e = model.estimate(workload(text, "y"))
        assert e["observed_time"].number > 0, written
        assert e.workload.observed.text == written


def test_a_utilization_is_the_rate_it_is_a_share_of():
    e = model.estimate(workload(H100 + "t = train llama3-8b, batch 8, context 4096, gpus 2 observed 40% MFU\n", "t"))
    assert e["observed_flop_rate"].number == pytest.approx(0.4 * 989.4e12)
    assert e["observed_time"].number == pytest.approx(e["flops"].number / 2 / (0.4 * 989.4e12))
    e = model.estimate(workload(A100 + "g = decode llama2-7b, batch 1 observed 69.35% MBU\n", "g"))
    assert e["observed_bandwidth"].number == pytest.approx(0.6935 * 2.039e12)
    assert e["observed_mbu"].number == pytest.approx(0.6935)
    # 82% of H100 NVLink's 450 GB/s each way is the bus bandwidth; over 2 × 7/8 of the buffer, the algorithm's
    e = model.estimate(workload(H100 + "ar = all_reduce(8 GB) across 8 GPUs over nvlink observed 82% of line rate\n",
                                "ar"))
    assert e["observed_busbw"].number == pytest.approx(0.82 * 450e9)
    assert e["observed_algbw"].number == pytest.approx(0.82 * 450e9 / 1.75)
    assert e["observed_time"].number == pytest.approx(8e9 / (0.82 * 450e9 / 1.75))


def test_a_launch_rate_counts_the_kernels_run():
    # 10,000 launches of one kernel at 200,000 launches/s take 50 ms; a graph is one launch of 10,000 kernels
    for graph in ("", " as a CUDA graph"):
        e = model.estimate(workload(H100 + f"x = bf16[1024]\nz = x * 2\ns = 10000 launches of z{graph} observed "
                                           "200,000 launches/s\n", "s"))
        assert e["observed_time"].number == pytest.approx(0.05)
        assert e["observed_launches_per_s"].number == pytest.approx(200_000)
    # an eager Llama 3 8B step: 15 kernels in each of 32 layers
    e = model.estimate(workload(H100 + "d = decode llama3-8b, batch 1 eager observed 9,600 kernels/s\n", "d"))
    assert e["kernels"].number == 480
    assert e["observed_tokens_per_s"].number == pytest.approx(20)


def test_a_stream_is_measured_against_its_repeated_workloads_peak():
    e = model.estimate(workload(H100 + "x = bf16[4096, 4096]\nz = x * 2\ns = 100 launches of z observed 1 TB/s\n",
                                "s"))
    assert e["observed_bandwidth"].number == pytest.approx(1e12)
    assert e["observed_mbu"].number == pytest.approx(1e12 / 3.35e12)
    assert e["observed_time"].number == pytest.approx(100 * 2 * X / 1e12)
    assert e["peak_flop_rate"].number == pytest.approx(67e12)  # the elementwise kernel's fp32 rate
    assert e["bytes_per_repeat"].number == 2 * X


# --- the checks each figure comes with -------------------------------------------------------------------------

def _checks(text: str) -> dict[str, object]:
    """The verdicts of the claims gpuspec added at the figure, by metric."""
    return {v.claim.metric: v for v in run(text).verdicts if v.claim.expected.span is None}


def test_every_figure_comes_with_the_checks_it_can_fail():
    assert set(_checks(A100 + "g = decode llama2-7b, batch 1 observed 100 tokens/s\n")) == \
        {"observed_mfu", "observed_mbu", "observed_launch_use", "memory_filled"}
    assert set(_checks(H100 + "x = bf16[1024]\nz = x * 2\ns = 10 launches of z observed 1 ms\n")) == \
        {"observed_mfu", "observed_bandwidth_use", "observed_launch_use", "memory_filled"}
    assert set(_checks(H100 + "ar = all_reduce(1 GB) across 8 GPUs over nvlink observed 1 ms\n")) == \
        {"observed_link_use", "memory_filled"}
    assert set(_checks(H100 + "t = train llama3-8b, batch 8, context 4096, gpus 8 observed 6 s\n")) == \
        {"observed_mfu", "memory_filled"}


# --- kernels per second: within what a real GPU runs back to back -------------------------------------------------

def test_a_launch_rate_no_gpu_reaches_fails_against_the_published_back_to_back_cost():
    # H100-SXM's published kernel_gap is Hazy Research's 1.3 µs a graph kernel: 1 / 1.3 µs = 769,231 kernels/s, and
    # the check allows twice that, 1,538,462/s. 10M launches/s (0.1 µs a launch) is 650% of it.
    spec = H100 + "v = bf16[4096]\nsmall = v * 2\ns = 1000 launches of small observed {}\n"
    check = _checks(spec.format("10M launches/s"))["observed_launch_use"]
    assert (check.status, check.source) == ("fail", "calibrated")
    assert check.actual.number == pytest.approx(10e6 * 1.3e-6 / 2)
    assert "kernel_gap (1.30 µs a kernel back to back)" in check.message and "check the figure and its unit" in \
        check.message
    # PyTorch's 280k ops/s (Horace He) is 18.2% of it; a graph of 1000 kernels in 1.3 ms is one kernel_gap each: 50%
    assert _checks(spec.format("280k launches/s"))["observed_launch_use"].actual.number == \
        pytest.approx(280e3 * 1.3e-6 / 2)
    graph = _checks(spec.replace("small observed", "small as a CUDA graph observed").format("1.3 ms"))
    assert graph["observed_launch_use"].status == "pass"
    assert graph["observed_launch_use"].actual.number == pytest.approx(0.5)


def test_a_decode_steps_kernels_are_held_to_the_same_rate():
    # An eager Llama 3 8B step runs 480 kernels: 20 tokens/s is 9,600 kernels/s, 0.62% of 2 / 1.3 µs; 4,000 tokens/s
    # would be 1.92M kernels/s, 124.8%.
    spec = H100 + "d = decode llama3-8b, batch 1 eager observed {} tokens/s\n"
    assert _checks(spec.format(20))["observed_launch_use"].actual.number == pytest.approx(9600 * 1.3e-6 / 2)
    fast = _checks(spec.format(4000))["observed_launch_use"]
    assert fast.status == "fail" and fast.actual.number == pytest.approx(1.92e6 * 1.3e-6 / 2)


@pytest.mark.parametrize("device", ["MI300X", "mine from H100-SXM with sms = 66"])
def test_no_launch_rate_check_where_no_published_profile_has_a_back_to_back_cost(device):
    # A model-only part and a device a spec names anew have no published profile: the check would only be skipped.
    spec = f"device {device}\nv = bf16[4096]\nsmall = v * 2\ns = 1000 launches of small observed 10M launches/s\n"
    assert "observed_launch_use" not in _checks(spec)


def test_a_launch_rate_claimed_on_the_ideal_model_says_it_needs_a_profile():
    spec = H100 + "v = bf16[4096]\nsmall = v * 2\ns = 1000 launches of small observed 1 ms\n"
    (error,) = errors(spec + "s.observed_launch_use < 100%\n")
    assert "needs kernel_gap" in error.message and "in practice" in error.help
    claimed = [v for v in verdicts(spec + "s.observed_launch_use in practice ≈ 65%\n")
               if v.claim.expected.span is not None and v.source == "calibrated"]
    assert [v.status for v in claimed] == ["pass"]  # 1 µs a kernel: 1e6/s over 2 / 1.3 µs = 65%


def test_a_figure_above_hbm_speed_passes_when_its_data_sits_in_l2_and_says_why():
    # 1024² bf16 doubled: 4,194,304 B a call; 0.8 µs is 5.24 TB/s, 257% of the A100's 2.039 TB/s HBM and 72.6% of
    # its L2's 7.22 TB/s (the whitepaper's 5120 B/clock × 1410 MHz); 4.19 MB fit in its 40 MB of L2
    spec = A100 + "x = bf16[1024, 1024]\nset timing = back_to_back\nw = x * 2 observed 0.8 µs\n"
    check = _checks(spec)["observed_bandwidth_use"]
    assert check.status == "pass"
    assert check.actual.number == pytest.approx(4194304 / 0.8e-6 / 7.22e12)
    assert "of L2's bandwidth: the 4.19 MB a call moves fit in L2 (40.0 MB)" in check.message
    timed_alone = _checks(A100 + "x = bf16[1024, 1024]\nw = x * 2 observed 0.8 µs\n")["observed_mbu"]
    assert timed_alone.status == "fail"
    assert timed_alone.actual.number == pytest.approx(4194304 / 0.8e-6 / 2.039e12)
    assert "`set timing = back_to_back`" in timed_alone.message
    beyond = _checks(spec.replace("0.8 µs", "0.4 µs"))["observed_bandwidth_use"]
    assert beyond.status == "fail" and beyond.actual.number == pytest.approx(4194304 / 0.4e-6 / 7.22e12)


def test_data_larger_than_l2_is_checked_against_hbm_even_when_repeated():
    # 8192² bf16 doubled moves 268 MB a repeat, more than the A100's 40 MB of L2
    spec = A100 + "x = bf16[8192, 8192]\nz = x * 2\nt = 100 launches of z observed 5 TB/s\n"
    check = _checks(spec)["observed_bandwidth_use"]
    assert check.status == "fail"
    assert check.actual.number == pytest.approx(5e12 / 2.039e12)
    assert "do not fit in L2" in check.message


def test_an_l2_bandwidth_given_as_a_range_is_checked_against_its_top():
    # H200: RRZE measured 9.5–10.3 TB/s on data sets that fit; 10 TB/s is possible, 10.5 TB/s is not
    spec = ("device H200\nx = bf16[1024, 1024]\nz = x * 2\n"
            "s = 1000 launches of z observed {} TB/s\n")
    assert _checks(spec.format(10))["observed_bandwidth_use"].actual.number == pytest.approx(10 / 10.3)
    assert _checks(spec.format(10))["observed_bandwidth_use"].status == "pass"
    assert _checks(spec.format(10.5))["observed_bandwidth_use"].status == "fail"


def test_a_profiles_usable_l2_is_the_l2_a_repeat_fits_in():
    # a device whose L2 a kernel can use is 1 MB: 4.19 MB a repeat do not fit, so HBM's bandwidth is the limit
    spec = ("device small from A100-80GB with l2_usable = 1 MB\nx = bf16[1024, 1024]\nz = x * 2\n"
            "s = 1000 launches of z observed 5 TB/s\n")
    check = _checks(spec)["observed_bandwidth_use"]
    assert check.status == "fail" and check.actual.number == pytest.approx(5e12 / 2.039e12)


@pytest.mark.parametrize("device, algorithm, gpus, algbw, status, share", [
    ("H100-SXM", "auto", 8, 275, "pass", 275 / 450),          # NVLink SHARP may run it: the algorithm bandwidth
    ("H100-SXM", "nvls", 8, 275, "pass", 275 / 450),
    ("H100-SXM", "ring", 8, 275, "fail", 275 * 1.75 / 450),   # a ring's bus bandwidth: 481 GB/s over 450 GB/s
    ("H100-SXM", "auto", 4, 350, "fail", 350 * 1.5 / 450),    # NCCL uses SHARP only above 4 GPUs
    ("A100-80GB", "auto", 8, 275, "fail", 275 * 1.75 / 300),  # no SHARP before Hopper; NVLink 3: 300 GB/s each way
])
def test_a_collectives_bus_bandwidth_is_within_its_line_rate(device, algorithm, gpus, algbw, status, share):
    spec = (f"device {device}\nset nccl_algorithm = {algorithm}\n"
            f"ar = all_reduce(8 GB) across {gpus} GPUs over nvlink observed {algbw} GB/s\n")
    check = _checks(spec)["observed_link_use"]
    assert (check.status, check.actual.number) == (status, pytest.approx(share))


@pytest.mark.parametrize("spec, needed, status", [
    # Llama 2 70B's 68,976,648,192 bf16 weights; with tp 2 half of them per GPU
    ("g = decode llama2-70b, batch 1 observed 10 tokens/s", 68_976_648_192 * 2, "fail"),
    ("g = decode llama2-70b, batch 1, tp 2 observed 10 tokens/s", 68_976_648_192, "pass"),
    # with a KV cache: Llama 2 7B at batch 8, 4096 tokens: 2 × 32 layers × 32 heads × 128 × 2 B per token
    ("g = decode llama2-7b, batch 8, context 4096 observed 10 tokens/s",
     6_738_415_616 * 2 + 2 * 32 * 32 * 128 * 2 * 4096 * 8, "pass"),
    # training: 16 B per parameter of Llama 3 70B, sharded over 8 GPUs
    ("g = train llama3-70b, batch 8, context 4096, gpus 8 observed 100 TFLOP/s", 70_553_706_496 * 16 / 8, "fail"),
    # a kernel's inputs and output; an eager chain's largest kernel (x + y reads two and writes one)
    ("x = bf16[100000, 300000]\ng = x * 2 observed 100 ms", 2 * 6e10, "fail"),
    ("x = bf16[1000, 1000]\ny = bf16[1000, 1000]\ng = (x + y) * 2 eager observed 1 ms", 3 * 2e6, "pass"),
    ("g = all_gather(8 GB) across 8 GPUs over nvlink observed 1 s", 8e9, "pass"),
])
def test_what_a_workload_keeps_in_memory_fits_in_the_devices(spec, needed, status):
    text = A100 + spec + "\n"
    e = model.estimate(workload(text, "g"))
    assert e["memory_needed"].number == pytest.approx(needed)
    check = _checks(text)["memory_filled"]
    assert check.actual.number == pytest.approx(needed / 80e9)
    assert check.status == status
    if status == "fail":
        assert "split it over more GPUs" in check.message


# --- hostile figures: located errors ---------------------------------------------------------------------------

KERNEL = "x = bf16[1024, 1024]\ny = x * 2"


@pytest.mark.parametrize("head, figure, words", [
    (KERNEL, "0% MBU", "larger than zero"),
    (KERNEL, "0 µs", "larger than zero"),
    (KERNEL, "150% MFU", "a utilization is at most 100%"),
    (KERNEL, "100.5% MBU", "a utilization is at most 100%"),
    (KERNEL, "60%", "a percentage needs the utilization it is"),
    (KERNEL, "60% MXU", "`MXU` is no utilization"),
    (KERNEL, "60% of line rate", "says nothing about an elementwise workload"),
    (KERNEL, "60 ×", "in plain numbers, which says nothing"),
    (KERNEL, "3", "needs a unit"),
    (KERNEL, "3 µs fast", "words after a unit name a utilization"),
    (KERNEL, "9 tokens/s", "a token rate, which says nothing about an elementwise workload"),
    (KERNEL, "9 launches/s", "a launch rate, which says nothing about an elementwise workload"),
    (KERNEL, "1e-400 µs", "would become zero"),
    (KERNEL, "3 parsecs", "unknown unit"),
    ("y = train llama3-8b, batch 8, context 4096, gpus 8", "60% MBU", "an MBU, which says nothing about a training"),
    ("y = all_reduce(1 GB) across 8 GPUs", "60% MFU", "an MFU, which says nothing about a collective"),
    ("y = decode llama3-8b, batch 1", "5 waves/s", "`waves` per second"),
    ("y = decode llama3-8b, batch 1", "5 numbers/s", "`numbers` per second"),
    ("y = decode llama3-8b, batch 1", "1000/s", "`1000 tokens/s` or `1000 launches/s`"),
    (KERNEL, "1000/s", "does not say what it counts per second"),
])
def test_a_hostile_figure_is_an_error_at_the_figure(head, figure, words):
    text = H100 + f"{head} observed {figure}\n"
    found = errors(text)
    assert len(found) == 1, [d.message for d in found]
    (error,) = found
    line = text.count("\n", 0, text.index(" observed ")) + 1
    column = text.split("\n")[line - 1].index("observed ") + 1  # the figure, or the number in it
    assert error.span.line == line and error.span.column in (column, column + len("observed ")), error
    assert words in error.message + (error.help or "")


def test_a_huge_figure_is_an_error_at_the_figure_not_a_verdict():
    text = A100 + "g = decode llama2-7b, batch 1 observed 1e300 tokens/s\n"
    found = errors(text)
    assert found and all(d.code == "not-finite" and (d.span.line, d.span.column) == (2, 31) for d in found)
    assert run(A100 + "g = decode llama2-7b, batch 1 observed 1e400 tokens/s\n").diagnostics[0].code == "bad-number"


def test_a_second_figure_is_an_error_not_lost():
    (error,) = errors(H100 + "x = bf16[8]\ny = x * 2 observed 3 µs observed 2 TB/s\n")
    assert error.code == "observed-figure" and (error.span.line, error.span.column) == (3, 25)
    assert "one observed figure" in error.message


def test_a_utilization_is_kept_as_written_by_the_canonical_layout():
    text = H100 + "t = train llama3-8b,batch 8,context 4096,gpus 8  observed  40%  MFU\n"
    formatted = format_text(text)
    assert formatted == H100 + "t = train llama3-8b, batch 8, context 4096, gpus 8 observed 40% MFU\n"
    assert not run(formatted).diagnostics
    assert model.estimate(workload(formatted, "t"))["observed_mfu"].number == pytest.approx(0.4)
