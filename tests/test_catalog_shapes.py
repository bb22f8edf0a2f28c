"""Catalog entries gpuspec can model but not measure, facts a part does not have, other published figures as data,
models from their shape, and whether a decode step reads the embedding table: each against numbers worked by hand
from the catalog's own sources."""
import pytest

from gpuspec import devices, harness, llm_catalog, measure, mistakes
from gpuspec.api import check_text, compile_text
from gpuspec.text import SpecText


def _verdicts(text: str):
    report = check_text(text, "c.gpu")
    assert not report.diagnostics, [e.message for e in report.diagnostics]
    return [v for v in report.verdicts if v.source == "model"]


def _errors(text: str):
    return check_text(text, "c.gpu").diagnostics


# --- models from their shape -------------------------------------------------------------------------------------

def test_the_shape_formula_reproduces_every_catalog_count():
    for name, model in llm_catalog.catalog().items():
        counted, words = llm_catalog.shape_params(model)
        assert counted == model.fact("params").value, name
        assert "counted from the shape" in words


def test_qwen2_differs_without_its_qkv_biases():
    # 28 layers of q (3584), k and v (512 each) biases: 28 x 4608 = 129,024 parameters.
    import attrs

    qwen = llm_catalog.lookup("qwen2-7b")
    without, _ = llm_catalog.shape_params(attrs.evolve(qwen, qkv_bias=False))
    assert qwen.fact("params").value - without == 28 * 4608


def test_llama2_70b_is_in_the_catalog_with_its_config_count():
    model = llm_catalog.lookup("Llama-2-70b-hf")
    assert model.name == "llama2-70b" and model.fact("params").value == 68_976_648_192
    assert model.fact("kv_heads").value == 8


SHAPE = "layers = 32, hidden = 4096, intermediate = 11008, heads = 32, kv_heads = 32, head_dim = 128"


def test_a_model_from_none_counts_its_params_from_its_shape_and_ties_embeddings():
    # Llama 2 7B's shape: 2 x 32000 x 4096 + 32 x 202,383,360 + 4096 = 6,738,415,616; tied, one table less.
    verdicts = _verdicts(f"device H100-SXM\nmodel shaped from none with {SHAPE}, vocab = 32000\n"
                         "decode shaped, batch 1 is params = 6,738,415,616\n"
                         "model tied from shaped with tied_embeddings = 1\n"
                         "decode tied, batch 1 is params = 6,607,343,616\n"
                         "decode tied, batch 1 is weights_read = 13.214687232 GB\n")
    assert [v.status for v in verdicts] == ["pass"] * 3


def test_a_catalog_model_whose_shape_a_spec_changes_counts_its_params_again():
    # Llama 3 8B with 64 layers: 2 x 128,256 x 4,096 + 64 x (41,943,040 + 176,160,768 + 8,192) + 4,096
    # = 1,050,673,152 + 13,959,168,000 + 4,096 = 15,009,845,248, where the base's 8,030,261,248 was kept before;
    # tied embeddings take one table away; `params` written in the spec wins, and an unchanged shape keeps the count
    verdicts = _verdicts("device H100-SXM\nmodel deep from llama3-8b with layers = 64\n"
                         "deep.params = 15,009,845,248\n"
                         "model tied8 from llama3-8b with tied_embeddings = 1\n"
                         "tied8.params = 7,504,924,672\n"
                         "model said from llama3-8b with layers = 64, params = 16e9\n"
                         "said.params = 16e9\n"
                         "model same from llama3-8b with tied_embeddings = 0\n"
                         "same.params = 8,030,261,248\n")
    assert [v.status for v in verdicts] == ["pass"] * 4


def test_a_model_for_weight_claims_needs_no_vocab_and_the_help_names_its_definition():
    text = (f"device H100-SXM\nmodel mine from none with params = 7e9, {SHAPE}\n"
            "decode mine, batch 1 is weight_bytes = 14 GB, t_weights ≈ 4.18 ms\n"
            "decode mine, batch 1, embedding read is t_mem ≈ 4.18 ms\n")
    assert [v.status for v in _verdicts(text)] == ["pass"] * 3
    (error,) = _errors(text + "decode mine, batch 1 is t_mem ≈ 4 ms\n")
    assert error.message == "model mine has no `vocab`"
    assert "`model mine from none`" in error.help and "embedding read" in error.help
    assert "`model mine with" not in error.help  # a form the language refuses is never suggested


@pytest.mark.parametrize("value, words", [("2", "yes or no"), ("0.5", "yes or no"), ("1e400", ""),
                                          ("3 GB", ""), ("maybe", "maybe"), ("yess", "yess")])
def test_a_flag_takes_1_or_0(value, words):
    errors = _errors(f"device H100-SXM\nmodel m from llama3-8b with tied_embeddings = {value}\n")
    assert len(errors) == 1 and errors[0].span.line == 2 and words in errors[0].message


@pytest.mark.parametrize("yes, no", [("yes", "no"), ("1", "0"), ("True", "false")])
def test_a_flag_reads_yes_or_no_as_a_writer_says_it(yes, no):
    # tied: Llama 3 8B less one 128,256 x 4,096 table = 7,504,924,672
    verdicts = _verdicts(f"device H100-SXM\nmodel t from llama3-8b with tied_embeddings = {yes}\n"
                         "t.params = 7,504,924,672\n"
                         f"model u from t with tied_embeddings = {no}\nu.params = 8,030,261,248\n")
    assert [v.status for v in verdicts] == ["pass", "pass"]


def test_embedding_read_or_gathered_is_the_spec_s_choice():
    # Llama 3 8B bf16: 8,030,261,248 x 2 B = 16.06 GB read whole; gathered, less the 128,256 x 4096 x 2 B table.
    verdicts = _verdicts("device H100-SXM\n"
                         "decode llama3-8b, batch 1, embedding read is weights_read = 16.060522496 GB\n"
                         "decode llama3-8b, batch 1, embedding gathered is weights_read = 15.009849344 GB\n"
                         "decode llama3-8b, batch 1 is weights_read = 15.009849344 GB\n")
    assert [v.status for v in verdicts] == ["pass"] * 3
    (error,) = _errors("device H100-SXM\ndecode llama3-8b, batch 1, embedding red is 1 kernels\n")
    assert error.code == "unknown-setting" and "`read`" in error.help


def test_the_default_embedding_keeps_a_decode_workload_s_harness_key():
    keys = []
    for setting in ("", ", embedding gathered", ", embedding read"):
        program = compile_text(SpecText("k.gpu", f"device H100-SXM\ndecode llama3-8b, batch 1{setting} is 1 kernels\n"))
        (_, statement, workload), = program.workloads
        keys.append(harness.workload_key(statement, workload))
    assert keys[0] == keys[1] != keys[2]


# --- devices ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["MI300X", "MI250X", "TPU-v5e"])
def test_a_model_only_device_is_modelled_and_its_harness_is_refused_in_words(name):
    program = compile_text(SpecText("m.gpu", f"device {name}\nx = bf16[4096, 4096]\nx * 2 fused is 1 kernels\n"))
    plans, refused = harness.plans(program)
    assert plans == [] and len(refused) == 1
    assert refused[0][1].startswith(f"{name} is model-only: ")
    derived = compile_text(SpecText("d.gpu", f"device mine from {name} with hbm_bandwidth = 1 TB/s\n"
                                             "x = bf16[4096, 4096]\nx * 2 fused is 1 kernels\n"))
    assert "model-only" in harness.plans(derived)[1][0][1]  # a device derived from one is model-only too


def test_harness_says_a_model_only_device_s_reason_once(tmp_path, capsys):
    from gpuspec.cli import main

    spec = tmp_path / "m.gpu"
    spec.write_text("device MI300X\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 20 µs\nz = x * 3 is ≈ 20 µs\n",
                    encoding="utf-8")
    assert main(["harness", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "nothing to measure: MI300X is model-only" in err and err.count("is model-only") == 1


def test_the_nvidia_defaults_do_not_apply_to_other_vendors():
    mi300x, h100 = devices.lookup("MI300X"), devices.lookup("H100-SXM")
    assert mi300x.fact("warp_size").value == 64 and h100.fact("warp_size").value == 32
    assert mi300x.fact("utilization_window") is None and mi300x.fact("arithmetic_latency") is None
    assert h100.fact("arithmetic_latency").value == 4
    # The AMD parts' launch facts are their own, each saying where it comes from: not the NVIDIA defaults.
    assert mi300x.fact("launch_cost") is not h100.fact("launch_cost")
    assert "stand-in" in mi300x.fact("launch_cost").note and "stand-in" in mi300x.fact("kernel_floor").note


@pytest.mark.parametrize("name", ["MI300X", "MI250X"])
def test_an_amd_part_has_a_sourced_kernel_floor_and_launch_costs(name):
    # RRZE's MI210 (CDNA 2) runs 64 kB kernels back to back at 32 GB/s: 65,536 B / 32e9 B/s = 2.048 µs each.
    device = devices.lookup(name)
    assert device.fact("kernel_floor").value == pytest.approx(2.05e-6)
    assert device.fact("kernel_floor").reference == "S-RRZE" and "MI210" in device.fact("kernel_floor").note
    assert device.fact("launch_cost").reference == "S-BRRR" and device.fact("cpp_launch_cost").value == \
        pytest.approx(2.05e-6)
    # A time claim works: 2 × 8192³ FLOP at 1307.4 TFLOP/s (MI300X) = 0.841 ms; at 383 TFLOP/s (MI250X) = 2.871 ms.
    expected = {"MI300X": "0.84 ms", "MI250X": "2.87 ms"}[name]
    report = check_text(f"device {name}\na = bf16[8192, 8192]\na @ a is ≈ {expected}\n"
                        "v = bf16[4096]\nsmall = v * 2 is ≈ 2.05 µs\n"
                        "1000 launches of small is ≈ 3.6 ms\n", "c.gpu")  # the host's 3.6 µs a launch sets the pace
    assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass"] * 3


def test_a_tpu_time_says_why_it_has_no_kernel_floor_and_its_roofline_still_holds():
    (error,) = _errors("device TPU-v5e\na = bf16[8192, 8192]\na @ a is ≈ 5.6 ms\n")
    assert "has no `kernel_floor`" in error.message and "XLA compiles a step into one program" in error.message
    assert "claim those" in error.message and error.span.column == 10
    (stream,) = _errors("device TPU-v5e\nv = bf16[4096]\ns = v * 2\n1000 launches of s is ≈ 5 ms\n")
    assert "has no `launch_cost`" in stream.message and "not op by op" in stream.message
    # The scaling book's arithmetic: 2 × 8192³ FLOP / 1.97e14 FLOP/s = 5.58 ms, and 3 × 8192² × 2 B / 8.1e11 B/s.
    report = check_text("device TPU-v5e\na = bf16[8192, 8192]\nc = a @ a\nc.t_math ≈ 5.58 ms\n"
                        "c.t_mem ≈ 0.497 ms\n", "c.gpu")
    assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass", "pass"]


def test_a_rocm_torch_is_refused_by_the_measuring_probe(tmp_path):
    from tests.test_harness_run import fake_python

    python = fake_python(tmp_path, "rocm", "print('6.2.41133'); sys.exit(4)")
    reason = measure.availability(measure.Options(device="cuda", python=python))
    assert "built for ROCm (HIP 6.2.41133)" in reason and "model-only" in reason
    assert "torch.version.hip" in measure.probe_source()  # the method probe refuses it too


def test_a_fact_a_part_lacks_says_why():
    (error,) = _errors("device L40S\nall_reduce(1 GB) across 8 GPUs over nvlink is time ≈ 1 ms\n")
    assert "the L40S has no NVLink" in error.message and error.help == "write `over pcie`"
    (error,) = _errors("device V100\ndevice.tensor_bf16 ≈ 1 TFLOP/s\n")
    assert "Volta's tensor cores take fp16 only" in error.message


@pytest.mark.parametrize(("workload", "help"), [
    ("a @ a", "make its tensors fp16 (`x = fp16[4096, 4096]`)"),
    ("attention(q, q, q) fused", "make its tensors fp16 (`x = fp16[4096, 4096]`)"),
    ("decode llama3-8b, batch 1", "write `weights fp16`"),
    ("train llama3-8b, batch 1, context 4096, gpus 8", "write `weights fp16`"),
])
def test_a_missing_tensor_rate_says_what_to_write_for_the_workload_at_hand(workload, help):
    (error,) = _errors(f"device V100\na = bf16[4096, 4096]\nq = bf16[1, 32, 4096, 128]\n{workload} is ≈ 1 ms\n")
    assert "Volta's tensor cores take fp16 only" in error.message and error.help == help
    assert "weights" not in error.message


def test_rebinding_to_a100_40gb_or_b200_finds_every_fact():
    # The bundled specs used to stop at pcie_bandwidth (A100-40GB) and boost_clock (B200).
    a100, b200 = devices.lookup("A100-40GB"), devices.lookup("B200")
    assert a100.fact("pcie_bandwidth").value == 64e9 and a100.fact("pcie_bandwidth").reference == "S-A100-DS"
    assert b200.fact("boost_clock").value == pytest.approx(1.98e9)
    assert 75e12 / (148 * 128 * 2) == pytest.approx(b200.fact("boost_clock").value, rel=1e-3)  # its derivation


def test_l2_bandwidth_ceilings_are_the_whitepaper_bytes_per_clock_times_the_boost_clock():
    assert devices.lookup("A100-80GB").fact("l2_bandwidth").value == pytest.approx(5120 * 1.41e9, rel=1e-3)
    assert devices.lookup("V100").fact("l2_bandwidth").value == pytest.approx(2048 * 1.53e9, rel=2e-3)
    assert "ceiling" in devices.lookup("A100-80GB").fact("l2_bandwidth").note
    assert "measured" in devices.lookup("H200").fact("l2_bandwidth").note


def test_other_published_figures_are_sourced_data_with_units():
    b200 = devices.lookup("B200")
    (fp32,) = [f for f in b200.figures if f.fact == "fp32"]
    assert (fp32.value, fp32.kind, fp32.reference) == (80e12, "announced", "S-GK-B200")
    assert all(f.reference in devices.references() for d in devices.catalog().values() for f in d.figures)


@pytest.mark.parametrize("entry, words", [
    ({"fact": "fp32", "value": "80 TFLOP/s", "kind": "launch", "what": "x", "ref": "S-HPCT"}, "kind `launch`"),
    ({"fact": "fp32", "value": "80 GB", "kind": "announced", "what": "x", "ref": "S-HPCT"}, "is in B"),
    ({"fact": "fp32", "value": "80 TFLOP/s", "kind": "announced", "what": "x", "ref": "S-NONE"}, "not in"),
    ({"fact": "fp33", "value": "80 TFLOP/s", "kind": "announced", "what": "x", "ref": "S-HPCT"}, "no field"),
    ({"fact": "fp32", "value": "67 TFLOP/s", "kind": "announced", "what": "x", "ref": "S-HPCT"}, "differs"),
    ({"fact": "fp32", "value": "nan TFLOP/s", "kind": "announced", "what": "x", "ref": "S-HPCT"}, "not a number"),
    ({"fact": "fp32"}, "expected"),
])
def test_a_malformed_figure_is_a_catalog_error_naming_it(entry, words):
    facts = dict(devices.lookup("H100-SXM").facts)
    with pytest.raises(devices.CatalogError, match=r"H100\.figures\[1\]") as raised:
        devices.figures_of([entry], facts, devices.references(), "H100")
    assert words in str(raised.value)


# --- SMs a kernel uses -----------------------------------------------------------------------------------------------

def test_sms_used_is_the_blocks_up_to_the_sm_count():
    # 64 x 256 elements at 256 threads per block: 64 blocks on a 132-SM H100; 4096² elements: every SM.
    # A 64 x 4096 @ 4096 x 4096 matmul in 128 x 128 tiles: 1 x 32 tiles.
    verdicts = _verdicts("device H100-SXM\nx = bf16[64, 256]\nx * 2 is 64 blocks, sms_used = 64\n"
                         "z = bf16[4096, 4096]\nz * 2 is sms_used = 132\n"
                         "a = bf16[64, 4096]\nb = bf16[4096, 4096]\na @ b is sms_used = 32\n")
    assert [v.status for v in verdicts] == ["pass"] * 4


# --- the diagnosis's pieces ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("symbol, step, neighbour", [
    ("µs", 1, "ms"), ("us", 1, "ms"), ("ms", -1, "µs"), ("s", 1, None), ("ps", -1, None), ("kB", 1, "MB"),
    ("KB", -1, "B"), ("TB/s", 1, "PB/s"), ("%", 1, None), ("×", -1, None), ("cycles", 1, None), ("GHz", 1, None),
])
def test_a_prefix_slip_is_one_step_along_the_unit_s_ladder(symbol, step, neighbour):
    assert mistakes._prefix_step(symbol, step) == neighbour
