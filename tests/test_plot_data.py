"""The numbers the pictures are drawn from: roofline ceilings, ridge points and workload points per source, and
a launch stream's host launches, GPU kernels and idle gaps. Pure Python: no matplotlib needed."""
import math

import pytest

from gpuspec import devices, model, published
from gpuspec.api import compile_text
from gpuspec.devices import Fact
from gpuspec.harness import workload_key
from gpuspec.model import launches
from gpuspec.plot import data, labels, select
from gpuspec.profiles import Profile
from gpuspec.results import Measurement
from gpuspec.sources import Calibrated, Measured, rebind
from gpuspec.text import SpecText

LESSON = """\
device H100-SXM with launch_cost = 5 µs
x = bf16[4096, 4096]
y = x * 2
z = x * 2 + 1 eager
v = bf16[4096]
small = v * 2
big = 1000 launches of y
tiny = 1000 launches of small
graphed = 1000 launches of small as a CUDA graph
a = bf16[4096, 8192]
b = bf16[8192, 4096]
c = a @ b
"""
US = 1e-6


def _subjects(text: str = LESSON) -> list[data.Subject]:
    program = compile_text(SpecText("lesson.gpu", text))
    return select.subjects([select.Target("lesson.gpu", None, text.count("\n"), program)])


def _named(subjects, label):
    return next(s for s in subjects if s.label == label)


def _point(panel, label, source="model"):
    return next(p for p in panel.points if label in p.labels and p.source == source)


# --- the roofline ----------------------------------------------------------------------------------


def test_one_panel_per_device_with_the_plain_and_tensor_ceilings_and_their_ridges():
    (panel,) = data.roofline(_subjects())
    assert panel.device.startswith("H100-SXM")
    (roof,) = panel.roofs
    assert roof.source == "model" and roof.bandwidth == pytest.approx(3.35e12)
    by_label = {c.label: c for c in roof.ceilings}
    assert set(by_label) == {"fp32", "fp16 · bf16", "tf32 tensor cores", "fp16 · bf16 tensor cores",
                             "fp8 tensor cores"}  # fp64 only when a workload runs at it
    assert [c.flop_rate for c in roof.ceilings] == sorted(c.flop_rate for c in roof.ceilings)
    fp32, tensor = by_label["fp32"], by_label["fp16 · bf16 tensor cores"]
    assert fp32.ridge == pytest.approx((67e12 / 3.35e12,) * 2)  # the lesson's 20 FLOP/B
    assert tensor.ridge == pytest.approx((989.4e12 / 3.35e12,) * 2)
    assert tensor.tensor and not fp32.tensor
    # The elementwise workloads run at the fp32 peak, the bf16 matmul at the tensor cores': both are marked used.
    assert fp32.used and tensor.used and not by_label["fp8 tensor cores"].used


def test_each_workload_is_a_point_at_its_intensity_and_achieved_rate():
    subjects = _subjects()
    (panel,) = data.roofline(subjects)
    y = _point(panel, "y")
    assert y.intensity == pytest.approx(0.25)  # 1 FLOP per 4 bytes moved
    assert y.flop_rate == pytest.approx(4096 * 4096 / (2 * 4096 * 4096 * 2 / 3.35e12), rel=0.01)
    assert y.bound == "memory"
    tiny = _point(panel, "tiny")
    assert tiny.bound == "overhead"
    assert tiny.flop_rate == pytest.approx(1000 * 4096 / (1000 * 5 * US + 2 * US), rel=0.01)
    c = _point(panel, "c")
    assert c.bound == "compute" and c.intensity > 200
    for point in panel.points:  # nothing above its roof
        roof = min(panel.roofs[0].bandwidth * point.intensity, max(x.flop_rate for x in panel.roofs[0].ceilings))
        assert point.flop_rate <= roof * (1 + 1e-9)


def test_points_on_the_same_spot_become_one_with_every_label():
    (panel,) = data.roofline(_subjects())
    merged = _point(panel, "y")
    # z runs two kernels of y's intensity at y's rate, and big is a thousand of y back to back.
    assert {"y", "z", "big"} <= set(merged.labels)
    assert merged.lines == tuple(sorted(merged.lines))
    assert "tiny" not in merged.labels and "small" not in merged.labels
    assert len({(p.intensity, p.flop_rate) for p in panel.points}) == len(panel.points)


def test_the_axis_limits_hold_every_point_and_ridge():
    (panel,) = data.roofline(_subjects())
    (x_low, x_high), (y_low, y_high) = panel.x_limits, panel.y_limits
    for point in panel.points:
        assert x_low < point.intensity < x_high and y_low < point.flop_rate < y_high
    for ceiling in panel.roofs[0].ceilings:
        assert x_low < ceiling.ridge[0] <= ceiling.ridge[1] < x_high and y_low < ceiling.flop_rate < y_high


def test_a_bandwidth_given_as_a_range_makes_the_ridge_an_interval():
    h100 = devices.lookup("H100-SXM")
    written = h100.fact("hbm_bandwidth")
    ranged = h100.with_facts("H100-ranged", {"hbm_bandwidth": Fact("hbm_bandwidth", 3.0e12, 3.35e12,
                                                                    written.dimension, "3..3.35 TB/s")})
    y = _named(_subjects(), "y")
    (panel,) = data.roofline([data.Subject("y", "t.gpu", 3, rebind(y.workload, ranged))])
    fp32 = next(c for c in panel.roofs[0].ceilings if c.label == "fp32")
    assert fp32.ridge == pytest.approx((67e12 / 3.35e12, 67e12 / 3.0e12))


def test_two_devices_make_two_panels():
    text = LESSON + "device A100-80GB\nw = bf16[4096, 4096]\nw2 = w * 2\n"
    panels = data.roofline(_subjects(text))
    assert [p.device.split(" ")[0] for p in panels] == ["H100-SXM", "A100-80GB"]
    assert [p.labels for p in panels[1].points] == [("w2",)]
    a100 = panels[1].roofs[0]
    assert a100.bandwidth == pytest.approx(devices.lookup("A100-80GB").fact("hbm_bandwidth").value)


def test_the_calibrated_source_adds_its_roof_and_points():
    profile = Profile("NVIDIA H100 80GB HBM3", {"hbm_bandwidth": 3.0e12}, {"gpu": "NVIDIA H100 80GB HBM3"})
    subjects = _subjects()
    (panel,) = data.roofline(subjects, {"model": data.ModelSource(), "calibrated": Calibrated(profile)})
    assert [r.source for r in panel.roofs] == ["model", "calibrated"]
    assert panel.roofs[1].bandwidth == pytest.approx(3.0e12)
    modelled, calibrated = _point(panel, "y"), _point(panel, "y", "calibrated")
    assert calibrated.intensity == modelled.intensity  # bytes and FLOPs are counted, not measured
    # the profile's bandwidth, and the lone kernel's latency it lacks from H100-SXM's published profile
    y = model.estimate(_named(subjects, "y").workload)
    lone = published.build("H100-SXM").facts["lone_kernel_latency"]
    assert calibrated.flop_rate == pytest.approx(y["flops"].number / (lone + y["bytes_moved"].number / 3.0e12))


def test_the_measured_source_is_a_point_at_the_measured_time():
    subjects = _subjects()
    y = _named(subjects, "y").workload
    gpu = {"gpu": "NVIDIA H100 80GB HBM3"}
    measured_time = 25 * US
    found = Measurement(workload_key("", y), "lesson.gpu", 3, "y = x * 2", "ok", None,
                        {"time": {"median": measured_time, "p10": measured_time, "p90": measured_time, "samples": 9}},
                        gpu)
    source = Measured({found.key: [found]}, {}, None)
    (panel,) = data.roofline(subjects, {"model": data.ModelSource(), "measured": source})
    point = _point(panel, "y", "measured")
    assert point.flop_rate == pytest.approx(model.estimate(y)["flops"].number / measured_time)
    assert [p.labels for p in panel.points if p.source == "measured"] == [point.labels]  # nothing else measured


def test_labels_are_names_or_the_workload_as_written():
    assert data.label_of("y = x * 2:") == "y"
    assert data.label_of("x*2 on 4096² bf16 is memory-bound, ≈20µs") == "x*2 on 4096² bf16"
    long = data.label_of("decode llama3-8b, batch 1, context 4096, 15 kernels per layer eager is fast")
    assert len(long) <= data.LABEL_LENGTH and long.endswith("…") and long.startswith("decode llama3-8b")


# --- the launch timeline ---------------------------------------------------------------------------


def _us(intervals):
    return [(round(i.start / US, 6), round(i.end / US, 6)) for i in intervals]


def test_tiny_kernels_wait_for_each_launch_and_leave_gaps():
    host, gpu = data.queue([2 * US], 4, 5 * US)
    assert _us(host) == [(0, 5), (5, 10), (10, 15), (15, 20)]
    assert _us(gpu) == [(5, 7), (10, 12), (15, 17), (20, 22)]
    assert _us(data.idle_gaps(gpu, 22 * US)) == [(0, 5), (7, 10), (12, 15), (17, 20)]


def test_big_kernels_queue_up_behind_each_other_and_never_leave_a_gap():
    host, gpu = data.queue([20 * US], 1000, 5 * US, until=60 * US)
    assert len(host) == 12 and _us(host)[-1] == (55, 60)
    assert _us(gpu) == [(5, 25), (25, 45), (45, 65)]  # the kernel running at the end of the span is kept whole
    assert [k.launch for k in gpu] == [1, 2, 3]
    assert _us(data.idle_gaps(gpu, 60 * US)) == [(0, 5)]  # only the wait for the first launch


@pytest.mark.parametrize("kernel, repeats", [("small", 40), ("y", 30), ("z", 25)])
@pytest.mark.parametrize("graph", [False, True])
def test_the_replayed_queue_agrees_with_the_model(kernel, repeats, graph):
    text = LESSON + f"s = {repeats} launches of {kernel}{' as a CUDA graph' if graph else ''}\n"
    stream = _named(_subjects(text), "s").workload
    e = model.estimate(stream)
    pattern, cost, node_cost = data._shape(stream)
    host, gpu = data.queue(pattern, repeats, cost, graph_launch=cost if graph else None, node_cost=node_cost)
    assert len(gpu) == e["kernels"].number and len(host) == e["launches"].number
    assert gpu[-1].end == pytest.approx(e["time"].number, rel=1e-9)
    assert sum(k.end - k.start for k in gpu) == pytest.approx(e["busy_time"].number, rel=1e-9)
    idle = sum(g.end - g.start for g in data.idle_gaps(gpu, gpu[-1].end))
    assert idle == pytest.approx(e["idle_time"].number, rel=1e-6, abs=1e-12)
    if not graph:  # the same rule as gpuspec.model.launches, played kernel by kernel
        assert gpu[-1].end == pytest.approx(launches.run(pattern, repeats, cost, 1.0).total, rel=1e-9)


def test_the_lesson_timeline_shows_big_and_tiny_at_the_same_launch_rate_on_one_span():
    subjects = [s for s in _subjects() if s.label in ("big", "tiny")]
    timeline = data.timeline(subjects)
    big, tiny = timeline.lanes
    assert (big.label, tiny.label) == ("big", "tiny")
    assert big.launch_cost == tiny.launch_cost == pytest.approx(5 * US)
    # 12 launches, or 3 of the ≈ 20 µs kernels, whichever is longer
    assert big.kernel_times == pytest.approx((20 * US,), rel=0.01)
    assert timeline.span == pytest.approx(max(12 * 5 * US, 3 * big.kernel_times[0]))
    assert _us(big.gaps) == [(0, 5)]
    assert len(tiny.gaps) == 12 and _us(tiny.gaps)[:3] == [(0, 5), (7, 10), (12, 15)]
    assert all(g.end - g.start == pytest.approx(3 * US) for g in tiny.gaps[1:])
    assert big.busy_share == pytest.approx(1.0, abs=1e-3) and tiny.busy_share == pytest.approx(0.4, abs=1e-3)
    assert all(i.start < timeline.span for lane in timeline.lanes for i in lane.host + lane.gpu)


def test_a_cuda_graph_is_one_launch_then_every_kernel_back_to_back():
    (graphed,) = [s for s in _subjects() if s.label == "graphed"]
    (lane,) = data.timeline([graphed]).lanes
    e = model.estimate(graphed.workload)
    assert lane.graph and len(lane.host) == 1
    assert lane.host[0].end == pytest.approx(e.fact("graph_launch_cost").number)
    assert lane.gpu[0].start == lane.host[0].end
    assert all(a.end == b.start for a, b in zip(lane.gpu, lane.gpu[1:]))
    per_kernel = 2 * US + e.fact("graph_node_cost").number
    assert all(math.isclose(k.end - k.start, per_kernel, rel_tol=1e-9) for k in lane.gpu)


# --- choosing what to draw -------------------------------------------------------------------------


def _target(tmp_path, text, line=None):
    path = tmp_path / "t.gpu"
    path.write_text(text)
    return select.load_targets([(str(path), line)])


def test_a_line_selects_the_workload_written_there(tmp_path):
    targets = _target(tmp_path, LESSON, 8)
    assert [s.label for s in select.stream_subjects(targets)] == ["tiny"]


def test_a_line_with_no_workload_names_the_lines_that_have_one(tmp_path):
    with pytest.raises(select.SelectionError, match=r"t\.gpu:2: no workload on this line; the workloads are on "
                                                    r"lines 3 \(y\), 4 \(z\)"):
        select.subjects(_target(tmp_path, LESSON, 2))
    with pytest.raises(select.SelectionError, match=r"t\.gpu:99: past the end of the file, which has 12 lines"):
        select.subjects(_target(tmp_path, LESSON, 99))


def test_a_line_that_is_not_a_stream_names_the_streams(tmp_path):
    with pytest.raises(select.SelectionError, match=r"t\.gpu:3: `y` is an elementwise workload, not a launch "
                                                    r"stream .*the streams are on lines 7 \(big\), 8 \(tiny\)"):
        select.stream_subjects(_target(tmp_path, LESSON, 3))


def test_a_file_without_streams_or_workloads_says_what_would_do(tmp_path):
    with pytest.raises(select.SelectionError, match="no launch streams to draw"):
        select.stream_subjects(_target(tmp_path, "device H100-SXM\nx = bf16[8]\ny = x * 2\n"))
    with pytest.raises(select.SelectionError, match="nothing to put on a roofline: no workloads"):
        select.roofline_subjects(_target(tmp_path, "device H100-SXM\ndevice.sms = 132\n"))


def test_a_stream_of_a_row_wise_workload_plays_every_kernel_of_a_repeat():
    text = LESSON + "r = bf16[32, 1024]\nsm = softmax(r) eager\ns = 50 launches of sm\n"
    stream = _named(_subjects(text), "s").workload
    (lane,) = data.timeline([_named(_subjects(text), "s")]).lanes
    assert len(lane.kernel_times) == 3  # max, exponentials and sum, normalize
    pattern, cost, node_cost = data._shape(stream)
    host, gpu = data.queue(pattern, 50, cost)
    assert len(gpu) == model.estimate(stream)["kernels"].number == 150
    assert gpu[-1].end == pytest.approx(model.estimate(stream)["time"].number, rel=1e-9)


# --- numbers no axis can hold ----------------------------------------------------------------------

ELEMENTWISE = "x = bf16[4096]\nsmall = x * 2\n"


@pytest.mark.parametrize("device, words", [
    # the ridge point overflowed to infinity and the limits' log10 raised OverflowError
    ("device H100-SXM with hbm_bandwidth = 1e-305 TB/s", ["hbm_bandwidth = 1.00e-293 B/s", "outside"]),
    ("device H100-SXM with fp32 = 1e-300 TFLOP/s", ["fp32 peak of 1.00e-288 FLOP/s", "outside"]),
    ("device H100-SXM with hbm_bandwidth = 1e-17 TB/s, tensor_fp8 = 1e12 PFLOP/s",
     ["ridge point of the fp8 tensor cores peak", "1e+32 FLOP/B", "outside"]),
])
def test_a_roof_off_any_axis_is_undrawable_with_the_fact_and_the_line(device, words):
    subjects = _subjects(device + "\n" + ELEMENTWISE)
    with pytest.raises(data.Undrawable) as raised:
        data.roofline(subjects)
    message = str(raised.value)
    assert message.startswith("lesson.gpu:3: `small` runs on H100-SXM")
    for word in words:
        assert word in message, message


def test_a_point_off_any_axis_is_undrawable_naming_the_workload():
    # 4 kFLOP a launch, each 1e305 s apart: 4e-302 FLOP/s, far below any axis
    subjects = _subjects("device H100-SXM with launch_cost = 1e305 s\n" + ELEMENTWISE + "s = 10 launches of small\n")
    with pytest.raises(data.Undrawable) as raised:
        data.roofline(subjects)
    assert str(raised.value).startswith("lesson.gpu:4: `s` cannot be placed on a roofline: its performance (model), ")
    assert "FILE:LINE" in str(raised.value) and "FILE:LINE" not in raised.value.reason
    (panel,) = data.roofline([s for s in subjects if s.label == "small"])  # the others still draw
    assert [p.labels for p in panel.points] == [("small",)]


def test_axis_limits_are_floats_however_large_the_peaks():
    # 10 ** 19 as an int is past what numpy takes as a number: matplotlib raised TypeError on the limits
    (panel,) = data.roofline(_subjects("device H100-SXM with tensor_fp8 = 10000000 PFLOP/s\n" + ELEMENTWISE))
    assert all(type(limit) is float for limit in panel.x_limits + panel.y_limits)
    assert panel.y_limits[1] >= 1e22


def test_a_stream_whose_queue_overflows_has_no_timeline_and_says_which():
    subjects = _subjects("device H100-SXM with launch_cost = 1e306 s\n" + ELEMENTWISE + "s = 1000 launches of small\n")
    with pytest.raises(data.Undrawable) as raised:
        data.timeline([s for s in subjects if s.label == "s"])
    assert raised.value.reason.startswith("lesson.gpu:4: `s` has no timeline to draw: `time` cannot be computed")


def test_a_negligible_launch_cost_still_shows_the_kernels():
    # The span was cut to 100 launch costs (1e-303 s): a picture of no kernel at all
    subjects = _subjects("device H100-SXM with launch_cost = 1e-305 s\n" + ELEMENTWISE
                         + "s = 10000000 launches of small\n")
    timeline = data.timeline([s for s in subjects if s.label == "s"])
    (lane,) = timeline.lanes
    kernel = lane.kernel_times[0]
    assert timeline.span == pytest.approx(3 * kernel)
    assert len(lane.gpu) == 3 and all(k.end - k.start == pytest.approx(kernel) for k in lane.gpu)
    assert len(lane.host) == data.MAX_DRAWN + 1  # millions are enqueued within the span; the first are drawn
    assert [(g.start, g.end) for g in lane.gaps] == [(0.0, 1e-305)]  # only the wait for the first launch


# --- equal ceilings, shared axes, zoomed lanes -----------------------------------------------------

L4 = "device L4\nx = bf16[4096, 4096]\ny = x * 2\n"


def test_ceilings_that_read_the_same_share_one_line_and_one_caption():
    # The L4's fp32, fp16 and bf16 are 30.3, 30.29 and 30.3 TFLOP/s: their captions were printed on top of each other
    (panel,) = data.roofline(_subjects(L4))
    (roof,) = panel.roofs
    plain = [c for c in roof.ceilings if not c.tensor]
    assert len(plain) == 1
    (ceiling,) = plain
    assert ceiling.dtypes == ("fp32", "fp16", "bf16")
    assert ceiling.caption == "fp32 · fp16 · bf16 30.3 TFLOP/s"
    assert ceiling.flop_rate == pytest.approx(30.3e12)
    bandwidth = devices.lookup("L4").fact("hbm_bandwidth").value
    assert ceiling.ridge == pytest.approx((30.29e12 / bandwidth, 30.3e12 / bandwidth))
    captions = [c.caption for c in roof.ceilings]
    assert len(set(captions)) == len(captions)  # no two captions alike, so none printed twice on one spot
    # rates that differ in what is shown stay apart: the H100's fp32 (67 TFLOP/s) and fp16 · bf16 (134 TFLOP/s)
    (h100,) = data.roofline(_subjects())
    assert [c.label for c in h100.roofs[0].ceilings if not c.tensor] == ["fp32", "fp16 · bf16"]


def test_panels_share_their_axis_ranges_unless_asked_for_their_own():
    subjects = _subjects(LESSON + L4.replace("x", "q").replace("y", "w"))
    shared = data.roofline(subjects)
    own = data.roofline(subjects, shared=False)
    assert [p.device.split(" ")[0] for p in shared] == ["H100-SXM", "L4"]
    assert shared[0].x_limits == shared[1].x_limits and shared[0].y_limits == shared[1].y_limits
    assert own[0].y_limits != own[1].y_limits  # the L4's roof is an order of magnitude lower
    for panel, alone in zip(shared, own):  # the shared range is the union of the panels' own
        assert panel.x_limits[0] <= alone.x_limits[0] and panel.x_limits[1] >= alone.x_limits[1]
        assert panel.y_limits[0] <= alone.y_limits[0] and panel.y_limits[1] >= alone.y_limits[1]
    assert shared[0].x_limits == (min(p.x_limits[0] for p in own), max(p.x_limits[1] for p in own))
    assert shared[0].y_limits == (min(p.y_limits[0] for p in own), max(p.y_limits[1] for p in own))


STREAMS = """\
device H100-SXM
x = bf16[4096]
tiny = x * 2
10,000 launches of tiny
short = 4 launches of tiny
10,000 launches of tiny as a CUDA graph
"""


def test_a_lane_that_shows_the_start_of_its_stream_says_how_much():
    subjects = [s for s in _subjects(STREAMS) if s.workload.kind == "stream"]
    timeline = data.timeline(subjects[:1])
    (lane,) = timeline.lanes
    # 12 launches of 3.6 µs are shown of the 10,000 the stream makes: 43.2 µs of 36.0 ms
    assert lane.launch_cost == pytest.approx(3.6 * US)
    assert timeline.zoom(lane) == "first 43.2 µs of 36.0 ms"
    short = data.timeline([subjects[1]])
    assert short.zoom(short.lanes[0]) == ""  # four launches fit: the whole stream is shown


def test_a_lane_title_names_a_stream_without_a_name_by_its_whole_statement():
    subjects = [s for s in _subjects(STREAMS) if s.workload.kind == "stream"]
    graphed = data.timeline([subjects[2]]).lanes[0]
    assert graphed.label.endswith("…")  # the short label a roofline point gets
    assert graphed.name == "10,000 launches of tiny as a CUDA graph"
    named = data.timeline([_named(_subjects(), "big")]).lanes[0]
    assert named.name == "big"


# --- where labels go (plot.labels: pure geometry, in pixels) ---------------------------------------


def _marker(x, y, half=5.0):
    return labels.Box(x - half, y - half, x + half, y + half)


def _no_overlaps(boxes):
    return all(a.overlap(b) == 0 for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_a_box_hangs_from_its_offset_as_aligned():
    place = labels.Place(10, -5, "left", "top")
    assert labels.box_at((100, 100), 40, 12, place) == labels.Box(110, 83, 150, 95)
    centred = labels.box_at((0, 0), 40, 12, labels.Place(0, 8, "center", "bottom"))
    assert (centred.x0, centred.x1, centred.y0) == (-20, 20, 8)
    first = labels.ring((7, 20))[0]
    assert first.dy < 0 and first.va == "top"  # below the point first: under a roof is where the room is


@pytest.mark.parametrize("seed", range(6))
def test_labels_of_a_dense_cluster_cover_no_label_no_marker_and_no_leader_crosses(seed):
    import random

    rng = random.Random(seed)
    area = labels.Box(0, 0, 800, 500)
    anchors = [(400 + rng.uniform(-25, 25), 250 + rng.uniform(-25, 25)) for _ in range(10)]
    markers = [_marker(*a) for a in anchors]
    wanted = [labels.Wanted(a, rng.uniform(30, 110), 12, labels.ring((10, 20, 32, 46, 62, 80, 100, 124)), 14)
              for a in anchors]
    placed = labels.place(wanted, area, markers)
    boxes = [p.box for p in placed]
    assert _no_overlaps(boxes)
    assert all(box.overlap(marker) == 0 for box in boxes for marker in markers)
    assert all(box.outside(area) == 0 for box in boxes)
    assert labels.crossings(placed) == 0
    for label, where in zip(wanted, placed):  # a leader exactly where a label is set further out, from its point
        far = math.hypot(where.place.dx, where.place.dy) > label.leader
        assert (where.leader is not None) == far
        if far:
            assert where.leader[0] == label.anchor


def test_a_label_stays_inside_the_axes_and_off_a_line_when_there_is_room():
    area = labels.Box(0, 0, 400, 300)
    line = ((0.0, 35.0), (400.0, 35.0))  # a roof through the first place, just under the point
    corner = labels.Wanted((395, 45), 80, 12, labels.ring((7, 14, 24)))
    assert labels._inside(line, labels.box_at(corner.anchor, 80, 12, corner.places[0])) > 0
    (where,) = labels.place([corner], area, [_marker(395, 45)], [line])
    assert where.box.outside(area) == 0 and labels._inside(line, where.box) == 0  # in the axes, off the line
    # where every place is covered, the least covered one is taken, not the first
    crowded = labels.Wanted((200, 150), 50, 10, labels.ring((8,)))
    blockers = [labels.Box(150, 100, 250, 150), labels.Box(150, 150, 250, 200), labels.Box(120, 120, 200, 180)]
    (taken,) = labels.place([crowded], area, fixed=blockers)
    free = min((labels.box_at(crowded.anchor, 50, 10, p) for p in crowded.places),
               key=lambda box: sum(box.overlap(b) for b in blockers))
    assert sum(taken.box.overlap(b) for b in blockers) == sum(free.overlap(b) for b in blockers)


def test_stacked_captions_keep_their_order_and_move_only_as_far_as_they_must():
    heights = [10.0] * 4
    assert labels.spread([50, 100, 200, 300], heights, 0, 400) == [50, 100, 200, 300]  # nothing to move
    moved = labels.spread([100, 102, 104, 300], heights, 0, 400, gap=1)
    assert moved[3] == 300
    assert [b - a for a, b in zip(moved, moved[1:3])] == [11, 11]  # packed edge to edge, a gap between
    assert sum(moved[:3]) / 3 == pytest.approx(102)  # about where they wanted to be, on average
    top = labels.spread([395, 398], [10, 10], 0, 400, gap=0)
    assert top == [385, 395]  # kept under the top
    crowded = labels.spread([5] * 6, [10] * 6, 0, 30, gap=0)  # more than fits: they never overlap
    assert all(b - a >= 10 for a, b in zip(crowded, crowded[1:]))


def test_workloads_of_several_files_with_one_name_are_told_apart_by_their_file(tmp_path):
    a, b = tmp_path / "a.gpu", tmp_path / "b.gpu"
    a.write_text(LESSON)
    b.write_text(LESSON)
    targets = select.load_targets([(str(a), None), (str(b), None)])
    labels = [s.label for s in select.subjects(targets)]
    assert "a.gpu: tiny" in labels and "b.gpu: tiny" in labels and "tiny" not in labels
    lanes = data.timeline([s for s in select.stream_subjects(targets) if s.label.endswith(": tiny")]).lanes
    assert [lane.place for lane in lanes] == [f"a.gpu:{lanes[0].line}", f"b.gpu:{lanes[0].line}"]
    assert [lane.name for lane in lanes] == ["tiny", "tiny"]  # the place names the file
    alone = data.timeline([s for s in _subjects() if s.label == "tiny"]).lanes[0]
    assert alone.place == f"line {alone.line}"  # one file: its line says where


def test_an_unnamed_stream_is_titled_by_its_workload_without_its_claims(tmp_path):
    targets = _target(tmp_path, "device H100-SXM\nx = bf16[1024]\ny = x * 2\n30 launches of y is ≈ 100 µs\n")
    (lane,) = data.timeline(select.stream_subjects(targets)).lanes
    assert lane.name == "30 launches of y"
