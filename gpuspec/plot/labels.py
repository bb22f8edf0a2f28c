"""Where a picture's labels go: each label tries places around its anchor and takes the one that covers least
(other labels, markers, lines, the edge of the axes), a label set further out getting a leader line to its
anchor that crosses as few others as it can.

Pure geometry on boxes and segments in one flat unit (the drawing's pixels), so that tests can check the
placement without drawing: `draw` measures each label's text, hands the boxes here and draws what comes back.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from gpuspec.record import Record, ValueRecord, record

# What covering costs, against a label's own area (boxes) or width (lines). Covering another label or a marker
# is nearly as bad as leaving the axes; crossing a line is tolerable; each step further out costs a little.
OUTSIDE, LABEL, MARKER, LINE, CROSSING, THROUGH, LEADER, DISTANCE = 1000.0, 200.0, 60.0, 3.0, 25.0, 12.0, 0.6, 0.01
PASSES = 3  # rounds of placing each label again among all the others, while that helps


@record
class Box(ValueRecord):
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def area(self) -> float:
        return (self.x1 - self.x0) * (self.y1 - self.y0)

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2

    def overlap(self, other: "Box") -> float:
        """The area the two boxes share (0 when they only touch)."""
        width = min(self.x1, other.x1) - max(self.x0, other.x0)
        height = min(self.y1, other.y1) - max(self.y0, other.y0)
        return width * height if width > 0 and height > 0 else 0.0

    def outside(self, area: "Box") -> float:
        """The part of this box that lies outside `area`."""
        return self.area - self.overlap(area)


Segment = tuple[tuple[float, float], tuple[float, float]]


@record
class Place(ValueRecord):
    """An offset from the anchor and how the label's box hangs from it: ha left puts the box's left edge at the
    offset, right its right edge, center its middle (va: bottom, top, center alike)."""

    dx: float
    dy: float
    ha: str
    va: str


@record
class Wanted(Record):
    """A label to place: its anchor, its size and the places it may take, nearest first."""

    anchor: tuple[float, float]
    width: float
    height: float
    places: tuple[Place, ...]
    leader: float = math.inf  # a place further than this from the anchor gets a leader line


@record
class Placed(Record):
    place: Place
    box: Box
    leader: Segment | None
    cost: float


def box_at(anchor: tuple[float, float], width: float, height: float, place: Place) -> Box:
    x = anchor[0] + place.dx - {"left": 0.0, "center": width / 2, "right": width}[place.ha]
    y = anchor[1] + place.dy - {"bottom": 0.0, "center": height / 2, "top": height}[place.va]
    return Box(x, y, x + width, y + height)


def ring(radii: tuple[float, ...], angles: int = 16) -> tuple[Place, ...]:
    """Places on circles around the anchor, nearest first; on each circle below the anchor first (under a
    roof is where a roofline has room), then the sides, then above. The box hangs away from the anchor."""
    order = sorted(range(angles), key=lambda k: (math.sin(2 * math.pi * k / angles) > 0.01,
                                                 abs(math.sin(2 * math.pi * k / angles) + 1), k))
    places = []
    for radius in radii:
        for k in order:
            angle = 2 * math.pi * k / angles
            dx, dy = radius * math.cos(angle), radius * math.sin(angle)
            ha = "left" if dx > 0.38 * radius else "right" if dx < -0.38 * radius else "center"
            va = "bottom" if dy > 0.38 * radius else "top" if dy < -0.38 * radius else "center"
            places.append(Place(round(dx, 2), round(dy, 2), ha, va))
    return tuple(places)


def place(wanted: Sequence[Wanted], area: Box, markers: Sequence[Box] = (), lines: Sequence[Segment] = (),
          fixed: Sequence[Box] = ()) -> list[Placed]:
    """A place for every label, in the order given. `markers` and `fixed` (texts already drawn) are boxes not to
    cover, `lines` segments best not crossed. Each label is placed greedily, the most crowded first, then
    placed again among all the others for a few rounds while the total cost falls."""
    scene = _Scene(area, list(markers), list(lines), list(fixed))
    chosen: list[Placed | None] = [None] * len(wanted)
    crowd = [sum(math.dist(w.anchor, other.anchor) < 4 * (w.width + w.height) for other in wanted) for w in wanted]
    for index in sorted(range(len(wanted)), key=lambda i: (-crowd[i], i)):
        chosen[index] = scene.best(wanted[index], [c for c in chosen if c is not None])
    for _ in range(PASSES):
        moved = False
        for index, label in enumerate(wanted):
            others = [c for i, c in enumerate(chosen) if i != index]
            now = scene.cost(label, chosen[index].place, others)
            better = scene.best(label, others)
            if better.cost < now - 1e-9:
                chosen[index], moved = better, True
        if not moved:
            break
    return chosen  # type: ignore[return-value]


class _Grid:
    """Boxes filed by the cells of a grid they touch, so that a query meets only the boxes near it (a roofline
    of hundreds of workloads has hundreds of markers, and each label tries dozens of places)."""

    CELL = 48.0

    def __init__(self, boxes: list[Box]):
        self.boxes = boxes
        self.cells: dict[tuple[int, int], list[int]] = {}
        for index, box in enumerate(boxes):
            for cell in self._cells(box.x0, box.y0, box.x1, box.y1):
                self.cells.setdefault(cell, []).append(index)

    def _cells(self, x0: float, y0: float, x1: float, y1: float):
        c = self.CELL
        for i in range(math.floor(x0 / c), math.floor(x1 / c) + 1):
            for j in range(math.floor(y0 / c), math.floor(y1 / c) + 1):
                yield i, j

    def near(self, x0: float, y0: float, x1: float, y1: float) -> list[Box]:
        if (x1 - x0) * (y1 - y0) > 1e6:  # a query as large as the picture: every box
            return self.boxes
        found: dict[int, None] = {}
        for cell in self._cells(x0, y0, x1, y1):
            found.update(dict.fromkeys(self.cells.get(cell, ())))
        return [self.boxes[i] for i in found]


class _Scene:
    """What a label may cover, and what covering it costs."""

    def __init__(self, area: Box, markers: list[Box], lines: list[Segment], fixed: list[Box]):
        self.area, self.lines = area, lines
        self.markers, self.fixed = _Grid(markers), _Grid(fixed)
        self.line_boxes = [(min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1])) for a, b in lines]

    def best(self, label: Wanted, others: list[Placed]) -> Placed:
        best: Placed | None = None
        for place in label.places:  # nearest first: once the distance alone costs more than the best, stop
            if best is not None and DISTANCE * math.hypot(place.dx, place.dy) >= best.cost:
                break
            cost = self.cost(label, place, others, best.cost if best else math.inf)
            if best is None or cost < best.cost:
                box = box_at(label.anchor, label.width, label.height, place)
                best = Placed(place, box, self._leader(label, place, box), cost)
        assert best is not None, "a label needs at least one place"
        return best

    def cost(self, label: Wanted, place: Place, others: list[Placed], enough: float = math.inf) -> float:
        box = box_at(label.anchor, label.width, label.height, place)
        x0, y0, x1, y1 = box.x0, box.y0, box.x1, box.y1
        size = max(box.area, 1e-9)
        cost = DISTANCE * math.hypot(place.dx, place.dy) + OUTSIDE * box.outside(self.area) / size
        for other in [*self.fixed.near(x0, y0, x1, y1), *(o.box for o in others)]:
            if other.x1 > x0 and other.x0 < x1 and other.y1 > y0 and other.y0 < y1:  # a quick look first
                cost += LABEL * other.overlap(box) / size
        for marker in self.markers.near(x0, y0, x1, y1):
            covered = marker.overlap(box)
            if covered > 0:
                cost += MARKER * (0.5 + covered / max(marker.area, 1e-9))
        if cost >= enough:
            return cost
        for segment, (sx0, sy0, sx1, sy1) in zip(self.lines, self.line_boxes):
            if sx1 >= x0 and sx0 <= x1 and sy1 >= y0 and sy0 <= y1:
                cost += LINE * _inside(segment, box) / max(x1 - x0, 1e-9)
        leader = self._leader(label, place, box)
        if leader is not None:
            cost += LEADER + DISTANCE * _length(leader)
            (ax, ay), (bx, by) = leader
            lx0, ly0, lx1, ly1 = min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)
            for other in others:
                if other.leader is not None and _cross(leader, other.leader):
                    cost += CROSSING
                near = other.box
                if near.x1 >= lx0 and near.x0 <= lx1 and near.y1 >= ly0 and near.y0 <= ly1 \
                        and _inside(leader, near) > 0:
                    cost += THROUGH
            for marker in self.markers.near(lx0, ly0, lx1, ly1):
                if math.dist(marker.centre, label.anchor) > 0.5 and _inside(leader, marker) > 0:
                    cost += THROUGH / 2
        for other in others:  # another label's leader through this one
            if other.leader is not None:
                (ax, ay), (bx, by) = other.leader
                if max(ax, bx) >= x0 and min(ax, bx) <= x1 and max(ay, by) >= y0 and min(ay, by) <= y1 \
                        and _inside(other.leader, box) > 0:
                    cost += THROUGH
        return cost

    @staticmethod
    def _leader(label: Wanted, place: Place, box: Box) -> Segment | None:
        """From the anchor to where a line towards the box's centre meets the box (None for a near place)."""
        if math.hypot(place.dx, place.dy) <= label.leader:
            return None
        return label.anchor, _edge(label.anchor, box)


def _edge(start: tuple[float, float], box: Box) -> tuple[float, float]:
    """Where the segment from `start` to the box's centre enters the box: the later of the two entries into the
    box's vertical and horizontal slabs (Liang–Barsky); `start` itself when it lies inside."""
    (x, y), (cx, cy) = start, box.centre
    dx, dy = cx - x, cy - y
    entries = [((low if delta > 0 else high) - origin) / delta
               for delta, low, high, origin in ((dx, box.x0, box.x1, x), (dy, box.y0, box.y1, y)) if abs(delta) > 1e-12]
    t = min(1.0, max([0.0, *entries]))
    return x + dx * t, y + dy * t


def _inside(segment: Segment, box: Box) -> float:
    """How much of the segment lies inside the box (Liang–Barsky clipping)."""
    (x0, y0), (x1, y1) = segment
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - box.x0), (dx, box.x1 - x0), (-dy, y0 - box.y0), (dy, box.y1 - y0)):
        if abs(p) < 1e-12:
            if q < 0:
                return 0.0
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 >= t1:
            return 0.0
    return (t1 - t0) * math.hypot(dx, dy)


def _length(segment: Segment) -> float:
    return math.dist(*segment)


def _cross(a: Segment, b: Segment) -> bool:
    """Whether two segments cross at a point inside both (sharing an end is not crossing)."""
    def side(p, q, r) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    d1, d2 = side(b[0], b[1], a[0]), side(b[0], b[1], a[1])
    d3, d4 = side(a[0], a[1], b[0]), side(a[0], a[1], b[1])
    return d1 * d2 < 0 and d3 * d4 < 0


def crossings(placed: list[Placed]) -> int:
    """How many pairs of leader lines cross (for tests and for judging a placement)."""
    leaders = [p.leader for p in placed if p.leader is not None]
    return sum(_cross(a, b) for i, a in enumerate(leaders) for b in leaders[i + 1:])


def spread(centres: list[float], heights: list[float], low: float, high: float, gap: float = 1.0) -> list[float]:
    """Centres for labels stacked in one column (a roofline's ceiling captions beside its right edge), each as
    near its wanted centre as it can be with no two overlapping: neighbours that would overlap are moved apart
    as a block centred where their wanted centres average, and the column is kept within [low, high] (where
    it does not fit, it runs past `low`, never into itself)."""
    order = sorted(range(len(centres)), key=lambda i: (centres[i], i))
    blocks: list[list[int]] = []  # runs of labels packed edge to edge, from the bottom of the column up

    def size(block: list[int]) -> float:
        return sum(heights[i] for i in block) + gap * (len(block) - 1)

    def wanted_bottom(block: list[int]) -> float:
        return sum(centres[i] for i in block) / len(block) - size(block) / 2

    for index in order:
        blocks.append([index])
        while len(blocks) > 1 and wanted_bottom(blocks[-2]) + size(blocks[-2]) + gap > wanted_bottom(blocks[-1]):
            last = blocks.pop()
            blocks[-1].extend(last)
    bottoms = [wanted_bottom(b) for b in blocks]
    floor = low
    for k, block in enumerate(blocks):  # up from `low`
        bottoms[k] = max(bottoms[k], floor)
        floor = bottoms[k] + size(block) + gap
    ceiling = high
    for k in reversed(range(len(blocks))):  # then down from `high`
        bottoms[k] = min(bottoms[k], ceiling - size(blocks[k]))
        ceiling = bottoms[k] - gap
    placed = [0.0] * len(centres)
    for block, y in zip(blocks, bottoms):
        for i in block:
            placed[i] = y + heights[i] / 2
            y += heights[i] + gap
    return placed
