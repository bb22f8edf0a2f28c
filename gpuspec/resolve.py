"""Spec AST -> Program: names, devices, units and workloads looked up; every semantic error of a file, together."""
from __future__ import annotations

import math

import attrs

from gpuspec import devices, metrics, nodes, units
from gpuspec import models as llm_models
from gpuspec.devices import Device, Fact
from gpuspec.diagnostics import Diagnostic, SpecError, did_you_mean
from gpuspec.program import (
    SOURCES,
    Claim,
    Expected,
    FactRef,
    Literal,
    MetricRef,
    NamedRef,
    Operation,
    Program,
    Ref,
    Tolerance,
    apply,
)
from gpuspec.text import Span
from gpuspec.workloads import (
    BINARY_OPS,
    COLLECTIVES,
    DTYPES,
    FLOAT_DTYPES,
    ROWWISE_OPS,
    UNARY_FLOPS,
    Apply,
    Attention,
    Collective,
    DecodeStep,
    Elementwise,
    Matmul,
    Observation,
    Rowwise,
    Scalar,
    Stream,
    Tensor,
    TrainingStep,
    broadcast,
    result_dtype,
    result_shape,
)

DEFAULT_THREADS_PER_BLOCK = 256
DEFAULT_TOLERANCE = 0.10
# Functions over quantities (not tensors) in named values and claims.
_QUANTITY_FUNCTIONS = {"min", "max", "ceil", "floor", "round", "sqrt"}
SETTINGS = ("tolerance", "threads_per_block", "sources", "mode", "registers_per_thread", "shared_memory_per_block",
            "sample_window")
DECODE_SETTINGS = ("batch", "context", "kernels_per_layer", "weights", "kv", "tp", "prompt")
KERNELS_PER_LAYER = {"eager": 15, "compiled": 8}  # see model/decode.py for what each counts
TRAINING_SETTINGS = ("batch", "context", "gpus", "weights")
STREAMABLE = ("elementwise", "rowwise", "attention", "matmul")  # workloads of kernels a stream can repeat
_TOKEN_RATE = units.divide(units.COUNT, units.TIME)
# What an observed figure may be, per workload kind (model/observed.py turns each into a time).
_OBSERVABLE = {
    units.TIME: None,  # every kind
    _TOKEN_RATE: ("decode", "training"),
    units.FLOP_RATE: ("elementwise", "matmul", "rowwise", "attention", "decode", "training"),
    units.BANDWIDTH: ("elementwise", "matmul", "rowwise", "attention", "decode", "collective"),
}
_OBSERVABLE_WORDS = {units.TIME: "a time (`9.35 ms`)", _TOKEN_RATE: "a token rate (`107 tokens/s`)",
                     units.FLOP_RATE: "a FLOP rate per GPU (`400 TFLOP/s`)",
                     units.BANDWIDTH: "a bandwidth (`1.4 TB/s`)"}
# The utilizations an observed figure can be held to: no run beats the device's peaks.
_POSSIBLE = {"decode": ("observed_mbu", "observed_mfu"), "training": ("observed_mfu",),
             **{kind: ("observed_mbu", "observed_mfu") for kind in ("elementwise", "matmul", "rowwise", "attention")}}


class _Invalid(Exception):
    """One semantic error; caught per claim or statement so the rest of the file is still checked."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def _error(code: str, message: str, span: Span | None, help: str | None = None) -> _Invalid:
    return _Invalid(Diagnostic(code, message, span, help))


class _Binding:
    """What a name in the file stands for, and the line that defined it."""

    __slots__ = ("line",)

    def __init__(self, line: int):
        self.line = line


class _Workload(_Binding):
    __slots__ = ("workload",)

    def __init__(self, workload: Elementwise, line: int):
        super().__init__(line)
        self.workload = workload


class _Value(_Binding):
    __slots__ = ("ref",)

    def __init__(self, ref: Ref, line: int):
        super().__init__(line)
        self.ref = ref


class _TensorName(_Binding):
    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor, line: int):
        super().__init__(line)
        self.tensor = tensor


class _Scope:
    """What is known at a point in the file: device, settings, and names defined so far."""

    def __init__(self):
        self.device: Device | None = None
        self.device_span: Span | None = None
        self.tolerance = Tolerance(DEFAULT_TOLERANCE, None, "± 10%", True)
        self.threads_per_block = DEFAULT_THREADS_PER_BLOCK
        self.sources: tuple[str, ...] = ("model",)
        self.sources_set = False
        self.mode = "eager"
        self.registers_per_thread: int | None = None
        self.shared_memory_per_block: float | None = None
        self.sample_window: float | None = None
        self.models: dict[str, object] = {}
        self.names: dict[str, _Workload | _Value | _TensorName] = {}


def resolve(spec: nodes.Spec) -> Program:
    """Resolve one parsed spec. Raises SpecError with every semantic error of the file."""
    return _Resolver(spec.path).run(spec)


class _Resolver:
    def __init__(self, path: str):
        self.path = path
        self.scope = _Scope()
        self.claims: list[Claim] = []
        self.workloads: list[tuple[Span, str, object]] = []
        self.errors: list[Diagnostic] = []
        self.quote: str | None = None

    def run(self, spec: nodes.Spec) -> Program:
        handlers = {nodes.DeviceStatement: self.device, nodes.ModelStatement: self.model, nodes.Setting: self.setting,
                    nodes.TensorBinding: self.tensor_binding, nodes.Subject: self.subject,
                    nodes.DirectClaim: self.direct_claim}
        for statement in spec.statements:
            if isinstance(statement, nodes.Quote):
                self.quote = statement.text
                continue
            try:
                handlers[type(statement)](statement)
            except _Invalid as invalid:
                self.errors.append(invalid.diagnostic)
            if not isinstance(statement, (nodes.Setting,)):
                self.quote = None
        if self.errors:
            raise SpecError(self.errors)
        return Program(self.path, self.claims, self.workloads)

    # --- devices and settings ---------------------------------------------------------------------

    def device(self, statement: nodes.DeviceStatement) -> None:
        if statement.base is None:
            base = devices.lookup(statement.name)
            if base is None:
                raise _error("unknown-device", f"unknown device `{statement.name}`", statement.span,
                             did_you_mean(statement.name, devices.known_names())
                             or "`gpuspec devices` lists the catalog; define a new device with "
                                f"`device {statement.name} from H100-SXM with ...`")
            name = base.name
        else:
            if statement.base.lower() == "none":
                base = devices.blank(statement.name)
            else:
                base = devices.lookup(statement.base)
                if base is None:
                    raise _error("unknown-device", f"unknown device `{statement.base}`", statement.span,
                                 did_you_mean(statement.base, devices.known_names()))
            name = statement.name
        facts: dict[str, Fact] = {}
        self.scope.device = base  # device.field in an override refers to the base's facts
        for assignment in statement.assignments:
            try:
                facts[assignment.name] = self._override(assignment)
            except _Invalid as invalid:
                self.errors.append(invalid.diagnostic)
        device = base.with_facts(name, facts) if facts or name != base.name else base
        self.scope.device, self.scope.device_span = device, statement.span

    def model(self, statement: nodes.ModelStatement) -> None:
        if statement.base is None:
            raise _error("model-needs-base", f"`model {statement.name}` defines a model, so it needs a base",
                         statement.span, f"write `model {statement.name} from llama3-8b with layers = ...`, or "
                         f"`from none` and every field")
        if statement.base.lower() == "none":
            base = llm_models.blank(statement.name)
        else:
            base = self.scope.models.get(statement.base) or llm_models.lookup(statement.base)
            if base is None:
                raise _error("unknown-model", f"unknown model `{statement.base}`", statement.span,
                             did_you_mean(statement.base, [*self.scope.models, *llm_models.known_names()]))
        facts = {}
        for assignment in statement.assignments:
            try:
                if assignment.name not in llm_models.FIELDS:
                    raise _error("unknown-field", f"models have no field `{assignment.name}`", assignment.span,
                                 did_you_mean(assignment.name, llm_models.FIELDS))
                ref = self._quantity(assignment.value, {})
                value = _constant(ref, assignment.value.span)
                _same_dimension(_dimension_of(ref), units.COUNT, assignment.name, assignment.value.span)
                if value != int(value) or value < 1:
                    raise _error("bad-field", f"{assignment.name} must be a whole number of at least 1",
                                 assignment.value.span)
                facts[assignment.name] = Fact(assignment.name, value, value, units.COUNT, ref.text,
                                              note="set in the spec")
            except _Invalid as invalid:
                self.errors.append(invalid.diagnostic)
        self.scope.models[statement.name] = base.with_facts(statement.name, facts)

    def _override(self, assignment: nodes.Assignment) -> Fact:
        if assignment.name not in devices.FIELDS:
            raise _error("unknown-field", f"devices have no field `{assignment.name}`", assignment.span,
                         did_you_mean(assignment.name, devices.FIELDS))
        ref = self._quantity(assignment.value, {})
        value = _constant(ref, assignment.value.span)
        dimension = devices.FIELDS[assignment.name][0]
        _same_dimension(_dimension_of(ref), dimension, assignment.name, assignment.value.span)
        if dimension == units.COUNT and (value != int(value) or value < 1):
            raise _error("bad-field", f"{assignment.name} must be a whole number of at least 1", assignment.value.span)
        if value <= 0:
            raise _error("bad-field", f"{assignment.name} must be more than zero", assignment.value.span)
        return Fact(assignment.name, value, value, dimension, ref.text, note="set in the spec")

    def setting(self, setting: nodes.Setting) -> None:
        name, span = setting.name, setting.span
        if name not in SETTINGS:
            raise _error("unknown-setting", f"unknown setting `{name}`", span,
                         did_you_mean(name, SETTINGS) or f"settings are: {', '.join(SETTINGS)}")
        if name in ("sources", "mode"):
            allowed = SOURCES if name == "sources" else ("eager", "fused")
            if not setting.words:
                raise _error("bad-setting", f"`{name}` takes {' or '.join(allowed)}", span)
            for word in setting.words:
                if word not in allowed:
                    raise _error("bad-setting", f"`{word}` is not a {name[:-1] if name == 'sources' else name}",
                                 span, did_you_mean(word, allowed) or f"use {', '.join(allowed)}")
            if name == "sources":
                self.scope.sources = tuple(dict.fromkeys(setting.words))
                self.scope.sources_set = True
            else:
                if len(setting.words) > 1:
                    raise _error("bad-setting", "`mode` takes one word: eager or fused", span)
                self.scope.mode = setting.words[0]
            return
        if setting.amount is None:
            raise _error("bad-setting", f"`{name}` takes a number", span)
        number, unit = setting.amount.low, self._unit(setting.amount.phrase)
        if name == "tolerance":
            self.scope.tolerance = self._tolerance(number, unit, span, from_file=True)
        elif name == "shared_memory_per_block":
            _same_dimension(unit.dimension, units.BYTES, name, span)
            self.scope.shared_memory_per_block = number.value * unit.scale
        elif name == "sample_window":
            _same_dimension(unit.dimension, units.TIME, name, span)
            if number.value <= 0:
                raise _error("bad-setting", "the sample window must be longer than zero", span)
            self.scope.sample_window = number.value * unit.scale
        else:
            whole = _whole_number(number, unit, span, name)
            if name == "threads_per_block":
                self.scope.threads_per_block = whole
            else:
                self.scope.registers_per_thread = whole

    # --- names ------------------------------------------------------------------------------------

    def _bind(self, name: str, binding, span: Span) -> None:
        if name in self.scope.names:
            line = self.scope.names[name].line
            raise _error("duplicate-name", f"`{name}` is already defined on line {line}", span,
                         f"use a new name, or claim its value with `{name} is ...`")
        if metrics.canonical(name) and not isinstance(binding, _TensorName):
            pass  # a value may share a metric's name; inside a workload's claims the metric wins
        self.scope.names[name] = binding

    def tensor_binding(self, binding: nodes.TensorBinding) -> None:
        tensor = self._tensor(binding.name, binding.tensor)
        self._bind(binding.name, _TensorName(tensor, binding.span.line), binding.span)

    def _tensor(self, name: str, tensor_type: nodes.TensorType) -> Tensor:
        if tensor_type.dtype not in DTYPES:
            raise _error("unknown-dtype", f"unknown dtype `{tensor_type.dtype}`", tensor_type.span,
                         did_you_mean(tensor_type.dtype, DTYPES) or "dtypes: bf16, fp16, fp32, fp64, fp8, int8, ...")
        shape = []
        for dim in tensor_type.dims:
            if dim.size < 1 or dim.repeat < 1 or dim.repeat > 8:
                raise _error("bad-shape", f"`{dim.size}^{dim.repeat}` is not a shape", dim.span,
                             "dimensions are whole numbers of at least 1; powers from 1 to 8")
            shape.extend([dim.size] * dim.repeat)
        if math.prod(shape) > 10**18:
            raise _error("bad-shape", "the tensor is too large to describe (over 10¹⁸ elements)", tensor_type.span)
        return Tensor(name, DTYPES[tensor_type.dtype][1], tuple(shape))

    # --- subjects: workloads and named values ------------------------------------------------------

    def subject(self, subject: nodes.Subject) -> None:
        local: dict[str, Tensor] = {}
        if subject.options.on is not None:
            for name in sorted(_free_names(subject.expr)):
                if name not in self.scope.names:
                    local[name] = self._tensor(name, subject.options.on)
        statement = subject.text.split("\n")[0].strip()
        named = self.scope.names.get(subject.expr.id) if isinstance(subject.expr, nodes.Name) else None
        if isinstance(named, _Workload) and subject.name is None:  # `y is ...`: claims on a workload already named
            if subject.options.span is not None:
                raise _error("options-on-a-name", f"`{subject.expr.id}` is already defined; its options go where "
                             "it is defined", subject.options.span)
            self._claims(subject.claims, statement, workload=named.workload, subject_ref=None)
            return
        workload_call = isinstance(subject.expr, nodes.Call) and subject.expr.function in (*ROWWISE_OPS, "attention",
                                                                                       *COLLECTIVES)
        if isinstance(subject.expr, (nodes.Stream, nodes.Decode)) or local or workload_call \
                or self._mentions_tensor(subject.expr):
            if isinstance(subject.expr, nodes.BinOp) and subject.expr.op == "@":
                workload = self._matmul(subject, local, statement)
            elif isinstance(subject.expr, nodes.Call) and subject.expr.function in ROWWISE_OPS:
                workload = self._rowwise(subject, local, statement)
            elif isinstance(subject.expr, nodes.Call) and subject.expr.function == "attention":
                workload = self._attention(subject, local, statement)
            elif isinstance(subject.expr, nodes.Call) and subject.expr.function in COLLECTIVES:
                workload = self._collective(subject, statement)
            elif isinstance(subject.expr, nodes.Stream):
                workload = self._stream(subject, statement)
            elif isinstance(subject.expr, nodes.Decode) and subject.expr.phase == "train":
                workload = self._training(subject, statement)
            elif isinstance(subject.expr, nodes.Decode):
                workload = self._decode(subject, statement)
            else:
                workload = self._workload(subject, local, statement)
            observed = subject.options.observed
            if observed is not None:
                workload = attrs.evolve(workload, observed=self._observation(observed, workload))
            self.workloads.append((subject.span, statement, workload))
            if subject.name:
                self._bind(subject.name, _Workload(workload, subject.span.line), subject.span)
            if observed is not None:
                self._possible(observed, statement, workload)
            self._claims(subject.claims, statement, workload=workload, subject_ref=None)
            return
        options = subject.options
        if options.on is not None or options.mode or options.threads or options.graph or options.observed:
            raise _error("not-a-workload", "`on`, `eager`, `fused`, `as a graph`, `with ... threads` and `observed` "
                         "describe workloads, but this expression has no tensors", subject.options.span)
        ref = self._quantity(subject.expr, {})
        if subject.name:
            ref = NamedRef(subject.name, ref, _dimension_of(ref), subject.name)
            self._bind(subject.name, _Value(ref, subject.span.line), subject.span)
        elif not subject.claims.items:
            raise _error("nothing-claimed", "this line claims nothing", subject.span,
                         "add `is` and a claim, e.g. `... is ≈ 20 µs`, or a comparison: `... ≈ 20 µs`")
        self._claims(subject.claims, statement, workload=None, subject_ref=ref)

    def _mentions_tensor(self, expr: nodes.Expr) -> bool:
        return any(isinstance(self.scope.names.get(n), (_TensorName, _Workload)) for n in _free_names(expr))

    def _workload(self, subject: nodes.Subject, local: dict[str, Tensor], statement: str) -> Elementwise:
        device = self._require_device(subject.span)
        tree = self._tensor_expr(subject.expr, local)
        threads = self.scope.threads_per_block
        if subject.options.threads is not None:
            threads = _whole_number(subject.options.threads, units.Unit("", 1.0, units.COUNT),
                                    subject.options.threads.span, "threads per block")
        mode = subject.options.mode or self.scope.mode
        if subject.options.tile is not None:
            raise _error("tiles-need-matmul", "`with ... tiles` describes a matmul (`a @ b`)", subject.options.span)
        where = subject.options.threads.span if subject.options.threads is not None else subject.span
        _within(device, "max_threads_per_block", threads, "threads per block", where)
        _within(device, "max_registers_per_thread", self.scope.registers_per_thread, "registers per thread",
                subject.span)
        _within(device, "shared_memory_per_block", self.scope.shared_memory_per_block, "shared memory per block",
                subject.span)
        return Elementwise(tree, mode, threads, device, self.scope.registers_per_thread,
                           self.scope.shared_memory_per_block, text=statement)

    def _matmul(self, subject: nodes.Subject, local: dict[str, Tensor], statement: str) -> Matmul:
        device = self._require_device(subject.span)
        options = subject.options
        if options.mode or options.threads is not None or options.graph:
            raise _error("matmul-options", "a matmul takes `with ROWSxCOLUMNS tiles`", options.span)
        a, b = (self._tensor_expr(side, local) for side in (subject.expr.left, subject.expr.right))
        for side, tensor in ((subject.expr.left, a), (subject.expr.right, b)):
            if not isinstance(tensor, Tensor) or len(tensor.shape) < 2:
                raise _error("matmul-operand", "each side of `@` is a tensor of two or more dimensions", side.span,
                             "name it first: `a = bf16[4096, 8192]`")
        if a.shape[-1] != b.shape[-2]:
            raise _error("shape-mismatch", f"`@` needs A's last dimension to equal B's second to last: "
                         f"{list(a.shape)} @ {list(b.shape)}", subject.expr.span)
        if a.dtype != b.dtype:
            raise _error("dtype-mismatch", f"`@` multiplies tensors of one dtype, not {a.dtype} and {b.dtype}",
                         subject.expr.span)
        try:
            broadcast(a.shape[:-2], b.shape[:-2])
        except ValueError as error:
            raise _error("shape-mismatch", str(error), subject.expr.span) from None
        tile = options.tile or (128, 128)
        if min(tile) < 1:
            raise _error("bad-tile", "a tile has at least one row and one column", options.span)
        return Matmul(a, b, tile, device, text=statement)

    def _call_options(self, subject: nodes.Subject, what: str) -> str:
        """The mode of a row-wise or attention workload: eager or fused; other options are errors."""
        options = subject.options
        if options.threads is not None or options.graph or options.tile is not None:
            raise _error(f"{what}-options", f"{_a(what)} workload takes only "
                         "`eager` or `fused`", options.span)
        mode = options.mode or self.scope.mode
        if mode not in ("eager", "fused"):
            raise _error(f"{what}-options", f"{_a(what)} workload runs `eager` or "
                         f"`fused`, not `{mode}`", options.span)
        return mode

    def _tensor_args(self, call: nodes.Call, local: dict[str, Tensor], count: int, what: str) -> list[Tensor]:
        if len(call.args) != count:
            raise _error("wrong-arguments", f"`{call.function}` takes {count} tensor argument"
                         f"{'s' * (count > 1)}, not {len(call.args)}", call.span,
                         f"write `{call.function}({', '.join(('x',) if count == 1 else ('q', 'k', 'v'))})`")
        found = []
        for arg in call.args:
            tensor = self._tensor_expr(arg, local)
            if not isinstance(tensor, Tensor):
                raise _error(f"{what}-operand", f"each argument of `{call.function}` is a named tensor",
                             arg.span, "name it first: `x = bf16[8192, 4096]`")
            found.append(tensor)
        return found

    def _rowwise(self, subject: nodes.Subject, local: dict[str, Tensor], statement: str) -> Rowwise:
        device = self._require_device(subject.span)
        call = subject.expr
        mode = self._call_options(subject, "rowwise")
        (x,) = self._tensor_args(call, local, 1, "rowwise")
        if not x.shape:
            raise _error("rowwise-operand", f"`{call.function}` works over the last axis, and `{x.name}` is 0-d",
                         call.args[0].span, "give it at least one dimension: `x = bf16[8192, 4096]`")
        if x.dtype not in FLOAT_DTYPES:
            raise _error("dtype-mismatch", f"`{call.function}` takes a floating-point tensor, not {x.dtype}",
                         call.args[0].span)
        return Rowwise(call.function, x, mode, device, text=statement)

    def _attention(self, subject: nodes.Subject, local: dict[str, Tensor], statement: str) -> Attention:
        device = self._require_device(subject.span)
        call = subject.expr
        mode = self._call_options(subject, "attention")
        q, k, v = self._tensor_args(call, local, 3, "attention")
        for arg, tensor in zip(call.args, (q, k, v)):
            if len(tensor.shape) != 4:
                raise _error("attention-operand", f"`{tensor.name}` is {list(tensor.shape)}; attention takes "
                             "4-d tensors: [batch, heads, seq, head_dim]", arg.span)
            if tensor.dtype not in ("bf16", "fp16"):
                raise _error("dtype-mismatch", f"attention runs on bf16 or fp16 tensors, not {tensor.dtype} "
                             f"(`{tensor.name}`)", arg.span)
        if len({q.dtype, k.dtype, v.dtype}) > 1:
            raise _error("dtype-mismatch", f"q, k and v share one dtype, not {q.dtype}, {k.dtype} and {v.dtype}",
                         call.span)
        if k.shape != v.shape:
            raise _error("shape-mismatch", f"k and v have one shape, not {list(k.shape)} and {list(v.shape)}",
                         call.span)
        if k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]:
            raise _error("shape-mismatch", f"q and k share batch and head_dim: {list(q.shape)} and "
                         f"{list(k.shape)}", call.span)
        if q.shape[1] % k.shape[1]:
            raise _error("shape-mismatch", f"kv_heads ({k.shape[1]}) must divide heads ({q.shape[1]})", call.span,
                         "grouped-query attention shares each k and v head among heads / kv_heads query heads")
        return Attention(q, k, v, mode, device, text=statement)

    def _collective(self, subject: nodes.Subject, statement: str) -> Collective:
        call, options = subject.expr, subject.options
        device = self._require_device(subject.span)
        if options.across is None:
            raise _error("collective-needs-gpus", f"`{call.function}` needs the GPUs it runs across", call.span,
                         f"write `{call.function}(1 GB) across 8 GPUs over nvlink`")
        if options.mode or options.threads is not None or options.graph or options.tile or options.on is not None:
            raise _error("collective-options", "a collective takes `across N GPUs over nvlink` (or pcie)",
                         options.span)
        if len(call.args) != 1:
            raise _error("wrong-arguments", f"`{call.function}` takes one argument: the buffer's size", call.span)
        count, noun, link = options.across
        gpus = _whole_number(count, units.Unit("", 1.0, units.COUNT), count.span, "the number of GPUs")
        if gpus < 2:
            raise _error("expected-whole-number", "a collective needs at least 2 GPUs", count.span)
        if noun.lower() not in ("gpus", "gpu", "devices"):
            raise _error("syntax-word", f"`across {count.text} {noun}`: write `across {count.text} GPUs`",
                         options.span)
        link = (link or ("nvlink" if device.fact("nvlink_bandwidth") else "pcie")).lower()
        if link not in ("nvlink", "pcie"):
            raise _error("unknown-link", f"unknown link `{link}`", options.span,
                         did_you_mean(link, ("nvlink", "pcie")) or "links: nvlink, pcie")
        if device.fact(f"{link}_bandwidth") is None:
            raise _error("missing-fact", f"device {device.name} has no `{link}_bandwidth`", options.span,
                         f"set it: `device {device.name} with {link}_bandwidth = ...`")
        size = self._quantity(call.args[0], {})
        _same_dimension(_dimension_of(size), units.BYTES, "the buffer", call.args[0].span)
        value = _constant(size, call.args[0].span)
        if value <= 0:
            raise _error("bad-size", "the buffer must be larger than zero", call.args[0].span)
        return Collective(call.function, value, gpus, link, device, text=statement)

    def _sample_window(self, device: Device) -> float:
        if self.scope.sample_window is not None:
            return self.scope.sample_window
        window = device.fact("utilization_window")
        return window.value if window is not None else 1 / 6

    def _stream(self, subject: nodes.Subject, statement: str) -> Stream:
        stream, options = subject.expr, subject.options
        if options.on is not None or options.threads is not None or options.mode:
            raise _error("stream-options", "a stream takes only `as a CUDA graph`; give other options to the "
                         "workload it launches", options.span)
        count = _whole_number(stream.count, units.Unit("", 1.0, units.COUNT), stream.count.span, "a launch count")
        bound = self.scope.names.get(stream.workload)
        if not isinstance(bound, _Workload):
            if bound is None:
                raise self._unknown_name(stream.workload, stream.span)
            raise _error("not-a-workload", f"`{stream.workload}` is not a workload, so it cannot be launched",
                         stream.span)
        if bound.workload.kind not in STREAMABLE:
            raise _error("not-a-kernel", f"`{stream.workload}` is {_a(bound.workload.kind)} workload; a stream "
                         f"launches {', '.join(STREAMABLE[:-1])} or {STREAMABLE[-1]} workloads", stream.span)
        device = bound.workload.device
        return Stream(bound.workload, count, options.graph, device, self._sample_window(device), text=statement)

    def _decode(self, subject: nodes.Subject, statement: str) -> DecodeStep:
        decode, options = subject.expr, subject.options
        device = self._require_device(subject.span)
        if options.on is not None or options.threads is not None:
            raise _error("decode-options", "a decode step takes `eager`, `compiled` and `as a CUDA graph`",
                         options.span)
        model = self._llm(decode)
        mode = "compiled" if options.mode in ("compiled", "fused") else "eager"
        values: dict[str, object] = {"batch": 1, "context": 0, "weights": "bf16"}
        for setting in decode.settings:
            if setting.name not in DECODE_SETTINGS:
                raise _error("unknown-setting", f"decode steps have no setting `{setting.name}`", setting.span,
                             did_you_mean(setting.name, DECODE_SETTINGS) or f"settings: {', '.join(DECODE_SETTINGS)}")
            if setting.name in ("weights", "kv"):
                values[setting.name] = self._dtype_setting(setting)
            else:
                values[setting.name] = self._count_setting(setting, least=0 if setting.name == "context" else 1)
        if "prompt" in values:  # a prefill's prompt is the context it builds
            if decode.phase != "prefill":
                raise _error("unknown-setting", "`prompt` is a prefill's setting; a decode step has `context`",
                             decode.span)
            values["context"] = values["prompt"]
        if decode.phase == "prefill" and int(values["context"]) < 1:  # type: ignore[arg-type]
            raise _error("prefill-needs-prompt", "a prefill needs its prompt's length", decode.span,
                         f"write `prefill {decode.model}, batch 1, prompt 2048`")
        per_layer = int(values.get("kernels_per_layer", KERNELS_PER_LAYER[mode]))  # type: ignore[arg-type]
        if int(values.get("tp", 1)) > 1 and device.fact("nvlink_bandwidth") is None:  # type: ignore[arg-type]
            raise _error("missing-fact", f"tensor parallelism needs NVLink, and {device.name} has no "
                         "`nvlink_bandwidth`", decode.span,
                         f"set it: `device {device.name} with nvlink_bandwidth = ...`")
        weights = str(values["weights"])
        return DecodeStep(model, device, int(values["batch"]), int(values["context"]), mode,  # type: ignore[arg-type]
                          options.graph, per_layer, weights, str(values.get("kv", weights)),
                          self._sample_window(device), int(values.get("tp", 1)), decode.phase, text=statement)

    def _training(self, subject: nodes.Subject, statement: str) -> TrainingStep:
        train, options = subject.expr, subject.options
        device = self._require_device(subject.span)
        if options.on is not None or options.threads is not None or options.mode or options.graph or options.tile:
            raise _error("training-options", "a training step takes its settings after commas, and `observed ...`",
                         options.span, f"write `train {train.model}, batch 512, context 8192, gpus 64`")
        model = self._llm(train)
        values: dict[str, object] = {"batch": 1, "gpus": 1, "weights": "bf16"}
        for setting in train.settings:
            if setting.name not in TRAINING_SETTINGS:
                raise _error("unknown-setting", f"training steps have no setting `{setting.name}`", setting.span,
                             did_you_mean(setting.name, TRAINING_SETTINGS)
                             or f"settings: {', '.join(TRAINING_SETTINGS)}")
            if setting.name == "weights":
                values["weights"] = self._dtype_setting(setting)
            else:
                values[setting.name] = self._count_setting(setting, least=1)
        if "context" not in values:
            raise _error("training-needs-context", "a training step needs the length of its sequences", train.span,
                         f"write `train {train.model}, batch 512, context 8192`")
        return TrainingStep(model, device, int(values["batch"]), int(values["context"]),  # type: ignore[arg-type]
                            int(values["gpus"]), str(values["weights"]), text=statement)  # type: ignore[arg-type]

    def _llm(self, decode: nodes.Decode):
        model = self.scope.models.get(decode.model) or llm_models.lookup(decode.model)
        if model is None:
            raise _error("unknown-model", f"unknown model `{decode.model}`", decode.span,
                         did_you_mean(decode.model, [*self.scope.models, *llm_models.known_names()])
                         or "`gpuspec models` lists the catalog")
        return model

    def _dtype_setting(self, setting: nodes.DecodeSetting) -> str:
        if setting.word not in DTYPES:
            raise _error("unknown-dtype", f"`{setting.word or setting.number.text}` is not a dtype",
                         setting.span, did_you_mean(setting.word or "", DTYPES))
        return DTYPES[setting.word][1]

    def _count_setting(self, setting: nodes.DecodeSetting, least: int) -> int:
        if setting.number is None:
            raise _error("expected-number", f"`{setting.name}` takes a whole number", setting.span)
        value = setting.number.value
        if value != int(value) or value < least:
            raise _error("expected-whole-number", f"{setting.name} must be a whole number of at least "
                         f"{least}, not `{setting.number.text}`", setting.span)
        return int(value)

    def _observation(self, observed: nodes.Quantity, workload) -> Observation:
        """`observed 107 tokens/s`: a figure in a unit that says something about this kind of workload."""
        unit = self._unit_text(observed.unit, observed.span) if observed.unit else units.Unit("", 1.0, units.COUNT)
        kinds = _OBSERVABLE.get(unit.dimension, ())
        if kinds is not None and workload.kind not in kinds:
            allowed = [words for dimension, words in _OBSERVABLE_WORDS.items()
                       if _OBSERVABLE[dimension] is None or workload.kind in _OBSERVABLE[dimension]]
            written = observed.number.text + (f" {observed.unit}" if observed.unit else "")
            raise _error("observed-figure", f"`observed {written}` is in {_describe(unit.dimension)}, which says "
                         f"nothing about {_a(workload.kind)} workload",
                         observed.span, f"observe {' or '.join(allowed)}")
        value = observed.number.value * unit.scale
        if value <= 0:
            raise _error("observed-figure", "an observed figure is larger than zero", observed.span)
        text = observed.number.text + (f" {observed.unit}" if observed.unit else "")
        return Observation(value, unit.dimension, text=text)

    def _possible(self, observed: nodes.Quantity, statement: str, workload) -> None:
        """Checks that come with an observed figure: the utilizations it implies are at most 100%."""
        percent = units.Unit("%", 0.01, units.COUNT)
        for metric in _POSSIBLE.get(workload.kind, ()):
            expected = Expected("point", 1.0, None, 0.01, percent, "100%", None, "100")
            self.claims.append(Claim(observed.span, f"{metric} ≤ 100%", statement, metric, "≤",
                                     MetricRef(workload, metric, metric), expected, None, ("model",),
                                     "an observed figure cannot beat the device's peak", True))

    def _require_device(self, span: Span) -> Device:
        if self.scope.device is None:
            raise _error("no-device", "no device is set for this workload", span,
                         "add a line such as `device H100-SXM` above it")
        return self.scope.device

    def _tensor_expr(self, expr: nodes.Expr, local: dict[str, Tensor]):
        if isinstance(expr, nodes.Quantity):
            if expr.unit:
                raise _error("unit-in-tensor-expression", f"a constant in a tensor expression takes no unit "
                             f"(`{expr.unit}`)", expr.span)
            return Scalar(expr.number.value)
        if isinstance(expr, nodes.Name):
            if expr.id in local:
                return local[expr.id]
            bound = self.scope.names.get(expr.id)
            if isinstance(bound, _TensorName):
                return bound.tensor
            if isinstance(bound, _Workload):
                w = bound.workload
                if w.kind == "matmul":  # its result: C
                    batch = broadcast(w.a.shape[:-2], w.b.shape[:-2])
                    return Tensor(expr.id, w.a.dtype, (*batch, w.a.shape[-2], w.b.shape[-1]))
                if w.kind == "rowwise":
                    return Tensor(expr.id, w.x.dtype, w.out_shape)
                if w.kind == "attention":
                    return Tensor(expr.id, w.q.dtype, w.q.shape)
                if w.kind != "elementwise":
                    raise _error("not-a-tensor", f"`{expr.id}` is {_a(w.kind)}, not a tensor", expr.span)
                return Tensor(expr.id, result_dtype(w.expr) or "fp32", result_shape(w.expr))
            if isinstance(bound, _Value):
                return Scalar(_constant(bound.ref, expr.span))
            raise self._unknown_name(expr.id, expr.span, tensors=True)
        if isinstance(expr, nodes.BinOp):
            if expr.op == "@":
                raise _error("matmul-inside", "a matmul (`@`) is a workload of its own; name it, then use its result",
                             expr.span, "c = a @ b, then d = c * 2")
            args = (self._tensor_expr(expr.left, local), self._tensor_expr(expr.right, local))
            node = Apply(BINARY_OPS[expr.op], args, _text(expr))
        elif isinstance(expr, nodes.Neg):
            node = Apply("neg", (self._tensor_expr(expr.operand, local),), _text(expr))
        elif isinstance(expr, nodes.Call):
            if expr.function in (*ROWWISE_OPS, "attention"):
                what = "attention" if expr.function == "attention" else "row-wise operation"
                raise _error(f"{'attention' if what == 'attention' else 'rowwise'}-inside",
                             f"`{expr.function}` is a{'n' if what == 'attention' else ''} {what}, a workload of "
                             "its own; name it, then use its result", expr.span,
                             f"y = {_text(expr)}, then use y")
            known = {*UNARY_FLOPS, "max", "min"}
            if expr.function not in known:
                raise _error("unknown-function", f"unknown elementwise function `{expr.function}`", expr.span,
                             did_you_mean(expr.function, sorted(known)))
            arity = 2 if expr.function in ("max", "min") else 1
            if len(expr.args) != arity:
                raise _error("wrong-arguments", f"`{expr.function}` takes {arity} argument{'s' * (arity > 1)}, "
                             f"not {len(expr.args)}", expr.span)
            op = BINARY_OPS.get(expr.function, expr.function)
            node = Apply(op, tuple(self._tensor_expr(a, local) for a in expr.args), _text(expr))
        else:
            raise _error("not-elementwise", "device fields and metrics cannot appear in a tensor expression",
                         expr.span)
        try:
            result_shape(node)
        except ValueError as error:
            raise _error("shape-mismatch", str(error), expr.span) from None
        return node

    def _unknown_name(self, name: str, span: Span, tensors: bool = False, metric_names=()) -> _Invalid:
        known = [*self.scope.names, *metric_names]
        hint = did_you_mean(name, known)
        if hint is None and tensors:
            hint = f"define it first (`{name} = bf16[4096, 4096]`), or give its type with `on 4096² bf16`"
        return _error("unknown-name", f"unknown name `{name}`", span, hint)

    # --- claims -----------------------------------------------------------------------------------

    def _claims(self, block: nodes.Block, statement: str, workload, subject_ref: Ref | None) -> None:
        quote = self.quote
        for item in block.items:
            if isinstance(item, nodes.Quote):
                quote = item.text
                continue
            try:
                self.claims.append(self._claim(item, statement, workload, subject_ref, quote))
            except _Invalid as invalid:
                self.errors.append(invalid.diagnostic)

    def direct_claim(self, direct: nodes.DirectClaim) -> None:
        self.claims.append(self._claim(direct.claim, direct.claim.text, None, None, self.quote))

    def _claim(self, claim: nodes.Claim, statement: str, workload, subject_ref: Ref | None, quote) -> Claim:
        value = claim.value
        if claim.subject is not None:
            subject = self._quantity(claim.subject, {}, workload)
        elif isinstance(value, nodes.Word):  # memory-bound
            if workload is None:
                raise _error("bound-needs-workload", f"`{claim.text}` is a claim about a workload", claim.span)
            subject = MetricRef(workload, "bound", "bound")
        elif workload is not None:
            subject = MetricRef(workload, self._implied_metric(value, claim), "")
            subject = MetricRef(workload, subject.metric, subject.metric)
        else:
            subject = subject_ref
        expected = self._expected(value, subject, claim)
        tolerance = None
        if claim.tolerance is not None:
            if claim.comparator != "≈":
                raise _error("tolerance-without-approx", "`±` goes with `≈` only", claim.tolerance.span,
                             f"write `≈ {value_text(value)} ± ...`")
            tolerance = self._tolerance(claim.tolerance.number, self._unit_text(claim.tolerance.unit,
                                        claim.tolerance.span), claim.tolerance.span, from_file=False)
            if tolerance.absolute is not None:
                written = self._unit_text(claim.tolerance.unit, claim.tolerance.span).dimension
                if written != _dimension_of(subject):
                    raise _error("dimension-mismatch", f"the tolerance is in {_describe(written)}, but the claim "
                                 f"is in {_describe(_dimension_of(subject))}", claim.tolerance.span)
        elif claim.comparator == "≈":
            tolerance = self.scope.tolerance
        return Claim(claim.span, claim.text, statement, subject.text or claim.text, claim.comparator, subject,
                     expected, tolerance, self.scope.sources, quote, self.scope.sources_set)

    def _implied_metric(self, value, claim: nodes.Claim) -> str:
        phrase = value.phrase
        if phrase is None:
            raise _error("which-metric", f"`{claim.text}` does not say which metric it is about", claim.span,
                         "add a unit or a word that names it (`62 waves`, `≈ 20 µs`), or write `waves = 62`")
        unit = self._unit(phrase)
        words = " ".join(phrase.words).lower()
        ratio = unit.symbol in ("%", "×", "x")
        if not ratio and not unit.noun and unit.dimension == units.COUNT and phrase.words:  # 16.8M elements
            unit = units.Unit(unit.symbol, unit.scale, unit.dimension, noun=phrase.words[0])
            words = " ".join(phrase.words[1:]).lower()
        if unit.noun:
            key = " ".join([metrics.singular(unit.noun.lower()), words]).strip()
            metric = metrics.NOUN_PHRASES.get(key) or metrics.NOUN_PHRASES.get(key.replace("sms", "sm"))
        elif ratio and words:  # `100% utilization`, `40% busy`: the words name it
            metric = metrics.canonical(words.replace(" ", "_"))
        else:
            metric = metrics.UNIT_PHRASES.get((unit.dimension, words))
        if metric is None:
            said = f"`{phrase.unit}{' ' + words if words else ''}`"
            raise _error("which-metric", f"{said} does not name a metric", phrase.span,
                         "name the metric: `t_mem / t_math ≈ 80×`, `bytes_read = 33.5 MB`")
        return metric

    def _expected(self, value, subject: Ref, claim: nodes.Claim) -> Expected:
        dimension = _dimension_of(subject)
        if isinstance(value, nodes.Word):
            if dimension is not None:
                raise _error("expected-number", f"{subject.text or 'this'} is a number, not a word like "
                             f"`{value.text}`", value.span)
            allowed = metrics.WORDS.get(subject.metric, ()) if isinstance(subject, MetricRef) else ()
            if value.text not in allowed:
                what = subject.metric.replace("_", " ") if isinstance(subject, MetricRef) else "this"
                raise _error("unknown-word", f"`{value.text}` is not a {what}", value.span,
                             did_you_mean(value.text, allowed) or f"use {', '.join(allowed)}")
            written = claim.text if claim.text.endswith("-bound") else value.text
            return Expected("word", value.text, None, 0.0, None, value.text, value.span, written)
        if dimension is None:
            words = ", ".join(metrics.WORDS.get(getattr(subject, "metric", ""), ()))
            raise _error("expected-word", f"{subject.text} is a word ({words}), not a number", value.span)
        unit = self._unit(value.phrase) if value.phrase else units.Unit("", 1.0, units.COUNT)
        if unit.dimension != dimension:
            what = subject.text or "the value"
            raise _error("dimension-mismatch", f"{what} is in {_describe(dimension)}, "
                         f"but `{value_text(value)}` is in {_describe(unit.dimension)}", value.span,
                         _unit_hint(dimension))
        low = value.low.value * unit.scale
        high = value.high.value * unit.scale if value.high is not None else None
        if high is not None and high < low:
            raise _error("empty-range", f"the range `{value_text(value)}` is empty", value.span,
                         "write the smaller number first")
        resolution = value.low.resolution * unit.scale
        return Expected(value.kind, low, high, resolution, unit, value_text(value), value.low.span, value.low.text)

    # --- units and quantities ---------------------------------------------------------------------

    def _unit(self, phrase: nodes.Phrase | None) -> units.Unit:
        if phrase is None:
            return units.Unit("", 1.0, units.COUNT)
        return self._unit_text(phrase.unit, phrase.span)

    def _unit_text(self, text: str | None, span: Span) -> units.Unit:
        if not text:
            return units.Unit("", 1.0, units.COUNT)
        try:
            return units.parse_unit(text)
        except units.UnknownUnit:
            raise _error("unknown-unit", f"unknown unit `{text}`", span,
                         did_you_mean(text, units.known_units())) from None

    def _tolerance(self, number: nodes.Number, unit: units.Unit, span: Span, from_file: bool) -> Tolerance:
        written = f"± {number.text}{unit.symbol if unit.symbol in ('%', '×') else ' ' + unit.symbol}".rstrip()
        if unit.symbol == "%":
            return Tolerance(number.value / 100, None, written, from_file)
        if unit.dimension == units.COUNT and not unit.symbol:
            raise _error("tolerance-unit", f"a tolerance of `{number.text}` needs a unit", span,
                         "write a percentage (`± 5%`) or a quantity (`± 2 µs`)")
        return Tolerance(None, number.value * unit.scale, written, from_file)

    def _quantity(self, expr: nodes.Expr, local: dict, workload=None) -> Ref:
        """A claim's subject or a named value's definition, as a reference with a checked dimension."""
        text = _text(expr)
        if isinstance(expr, nodes.Quantity):
            unit = self._unit_text(expr.unit, expr.span)
            return Literal(expr.number.value * unit.scale, unit.dimension, text)
        if isinstance(expr, nodes.Name):
            if workload is not None:
                metric = metrics.canonical(expr.id)
                if metric is not None:
                    return MetricRef(workload, metric, expr.id)
            bound = self.scope.names.get(expr.id)
            if isinstance(bound, _Value):
                return bound.ref
            if isinstance(bound, _Workload):
                raise _error("workload-as-number", f"`{expr.id}` is a workload, not a number", expr.span,
                             f"name one of its metrics, e.g. `{expr.id}.time`")
            if isinstance(bound, _TensorName):
                raise _error("tensor-as-number", f"`{expr.id}` is a tensor, not a number", expr.span,
                             f"claim about a workload over it, e.g. `{expr.id} * 2 is ≈ 20 µs`")
            raise self._unknown_name(expr.id, expr.span, metric_names=metrics.METRICS if workload else ())
        if isinstance(expr, nodes.Member):
            bound = self.scope.names.get(expr.owner)
            if not isinstance(bound, _Workload):
                if bound is None:
                    raise self._unknown_name(expr.owner, expr.span)
                raise _error("not-a-workload", f"`{expr.owner}` is not a workload, so it has no metrics", expr.span)
            metric = metrics.canonical(expr.attribute)
            if metric is None:
                raise _error("unknown-metric", f"unknown metric `{expr.attribute}`", expr.span,
                             did_you_mean(expr.attribute, [*metrics.METRICS, *metrics.ALIASES]))
            return MetricRef(bound.workload, metric, text)
        if isinstance(expr, nodes.DeviceField):
            device = self._require_device(expr.span)
            if expr.field_name not in devices.FIELDS:
                raise _error("unknown-field", f"devices have no field `{expr.field_name}`", expr.span,
                             did_you_mean(expr.field_name, devices.FIELDS))
            if device.fact(expr.field_name) is None:
                raise _error("missing-fact", f"device {device.name} has no `{expr.field_name}` in the catalog",
                             expr.span, f"set it: `device {device.name} with {expr.field_name} = ...`")
            return FactRef(device, expr.field_name, text)
        if isinstance(expr, nodes.Neg):
            operand = self._quantity(expr.operand, local, workload)
            return Operation("neg", (operand,), _dimension_of(operand), text)
        if isinstance(expr, nodes.BinOp):
            left = self._quantity(expr.left, local, workload)
            right = self._quantity(expr.right, local, workload)
            return Operation(expr.op, (left, right), self._combine(expr, left, right), text)
        if isinstance(expr, nodes.Call):
            if expr.function not in _QUANTITY_FUNCTIONS:
                raise _error("unknown-function", f"unknown function `{expr.function}`", expr.span,
                             did_you_mean(expr.function, sorted(_QUANTITY_FUNCTIONS)))
            args = tuple(self._quantity(a, local, workload) for a in expr.args)
            wanted = 1 if expr.function in ("ceil", "floor", "round", "sqrt") else None
            if (wanted and len(args) != wanted) or not args:
                raise _error("wrong-arguments", f"`{expr.function}` takes {wanted or 'one or more'} argument(s)",
                             expr.span)
            dims = {_dimension_of(a) for a in args}
            if None in dims:
                raise _error("word-in-arithmetic", "a word (a bound) cannot take part in arithmetic", expr.span)
            if expr.function in ("min", "max") and len(dims) > 1:
                raise _error("dimension-mismatch", f"`{expr.function}` of values in different units", expr.span)
            dimension = _dimension_of(args[0]) if expr.function != "sqrt" else _root(_dimension_of(args[0]), expr.span)
            return Operation(expr.function, args, dimension, text)
        raise _error("bad-expression", "this cannot be evaluated", getattr(expr, "span", None))

    def _combine(self, expr: nodes.BinOp, left: Ref, right: Ref) -> units.Dimension:
        a, b = _dimension_of(left), _dimension_of(right)
        if a is None or b is None:
            raise _error("word-in-arithmetic", "a word (a bound) cannot take part in arithmetic", expr.span)
        if expr.op in "+-":
            if a != b:
                raise _error("dimension-mismatch", f"cannot {'add' if expr.op == '+' else 'subtract'} "
                             f"{_describe(b)} {'to' if expr.op == '+' else 'from'} {_describe(a)}", expr.span)
            return a
        if expr.op == "@":
            raise _error("matmul-of-numbers", "`@` multiplies tensors, not numbers", expr.span)
        if expr.op == "*":
            return units.multiply(a, b)
        if expr.op == "/":
            return units.divide(a, b)
        if b != units.COUNT or not isinstance(right, Literal) or right.value != int(right.value):
            raise _error("bad-power", "a power must be a whole number without a unit", expr.right.span)
        return units.power(a, int(right.value))


# --- helpers ------------------------------------------------------------------------------------


def _free_names(expr: nodes.Expr) -> set[str]:
    if isinstance(expr, nodes.Name):
        return {expr.id}
    if isinstance(expr, nodes.BinOp):
        return _free_names(expr.left) | _free_names(expr.right)
    if isinstance(expr, nodes.Neg):
        return _free_names(expr.operand)
    if isinstance(expr, nodes.Call):
        return set().union(*(_free_names(a) for a in expr.args))
    return set()


def _text(expr: nodes.Expr) -> str:
    """An expression written back in a canonical form (for messages and derivations)."""
    if isinstance(expr, nodes.Quantity):
        unit = expr.unit or ""
        return f"{expr.number.text}{'' if unit in ('', '%', '×') else ' '}{unit}"
    if isinstance(expr, nodes.Name):
        return expr.id
    if isinstance(expr, nodes.Member):
        return f"{expr.owner}.{expr.attribute}"
    if isinstance(expr, nodes.DeviceField):
        return f"device.{expr.field_name}"
    if isinstance(expr, nodes.Neg):
        return f"-{_text(expr.operand)}"
    if isinstance(expr, nodes.Call):
        return f"{expr.function}({', '.join(_text(a) for a in expr.args)})"
    if isinstance(expr, nodes.BinOp):
        left, right = _text(expr.left), _text(expr.right)
        if isinstance(expr.left, nodes.BinOp) and _PRECEDENCE[expr.left.op] < _PRECEDENCE[expr.op]:
            left = f"({left})"
        if isinstance(expr.right, nodes.BinOp) and _PRECEDENCE[expr.right.op] <= _PRECEDENCE[expr.op]:
            right = f"({right})"
        return f"{left}{expr.op}{right}" if expr.op == "^" else f"{left} {expr.op} {right}"
    return "?"


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 3}


def value_text(value) -> str:
    if isinstance(value, nodes.Word):
        return value.text
    number = value.low.text + ("+" if value.kind == "at_least" else "")
    if value.high is not None:
        number += "–" + value.high.text
    if value.phrase is None:
        return number
    unit = value.phrase.unit
    joiner = "" if unit in ("%", "×") else " "
    return " ".join([number + joiner + unit, *value.phrase.words])


def _dimension_of(ref: Ref) -> units.Dimension | None:
    if isinstance(ref, MetricRef):
        return metrics.METRICS[ref.metric].dimension
    if isinstance(ref, FactRef):
        return devices.FIELDS[ref.name][0]
    return ref.dimension


def _root(dimension, span) -> units.Dimension:
    if any(x % 2 for x in dimension):
        raise _error("bad-power", "the square root of this unit is not a unit", span)
    return tuple(x // 2 for x in dimension)  # type: ignore[return-value]


def _a(word: str) -> str:
    """`a decode`, `an elementwise`: the article for a kind of workload."""
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def _describe(dimension: units.Dimension | None) -> str:
    names = {units.TIME: "time (s)", units.BYTES: "bytes (B)", units.FLOPS: "FLOP", units.BANDWIDTH: "bytes/s",
             units.FLOP_RATE: "FLOP/s", units.INTENSITY: "FLOP/B", units.CYCLES: "cycles",
             units.FREQUENCY: "Hz", units.POWER: "W", units.COUNT: "plain numbers", _TOKEN_RATE: "tokens/s"}
    if dimension is None:
        return "words"
    return names.get(dimension, units.si_symbol(dimension))


def _unit_hint(dimension: units.Dimension | None) -> str | None:
    examples = {units.TIME: "µs", units.BYTES: "MB", units.FLOPS: "MFLOP", units.BANDWIDTH: "TB/s",
                units.FLOP_RATE: "TFLOP/s", units.INTENSITY: "FLOP/B", units.CYCLES: "cycles",
                units.FREQUENCY: "GHz", units.POWER: "W", units.COUNT: "a plain number, `%` or `×`"}
    example = examples.get(dimension)
    return f"write it in {example}" if example else None


def _same_dimension(actual, wanted, what: str, span: Span) -> None:
    if actual != wanted:
        raise _error("dimension-mismatch", f"{what} is in {_describe(wanted)}, not {_describe(actual)}", span,
                     _unit_hint(wanted))


def _within(device: Device, field: str, asked: float | None, what: str, span: Span) -> None:
    """An error when a workload asks for more of a per-block resource than the device allows."""
    limit = device.fact(field)
    if asked is not None and limit is not None and asked > limit.value:
        raise _error("over-device-limit", f"{units.format_count(asked)} {what} is more than {device.name} allows "
                     f"({limit.written})", span)


def _whole_number(number: nodes.Number, unit: units.Unit, span: Span, what: str) -> int:
    value = number.value * unit.scale
    if unit.dimension != units.COUNT or value != int(value) or value < 1:
        raise _error("expected-whole-number", f"{what} must be a whole number of at least 1, not `{number.text}`",
                     span)
    return int(value)


def _constant(ref: Ref, span: Span) -> float:
    """The value of a reference that needs no model (numbers, named values, device facts)."""
    if isinstance(ref, Literal):
        return ref.value
    if isinstance(ref, NamedRef):
        return _constant(ref.expr, span)
    if isinstance(ref, FactRef):
        return ref.device.fact(ref.name).value  # type: ignore[union-attr]
    if isinstance(ref, Operation):
        args = [_constant(a, span) for a in ref.args]
        try:
            value = apply(ref.op, args)
        except ZeroDivisionError:
            raise _error("division-by-zero", "division by zero", span) from None
        except (ArithmeticError, ValueError) as error:
            raise _error("bad-arithmetic", f"`{ref.text}` cannot be computed: {error}", span) from None
        if not math.isfinite(value):
            raise _error("bad-arithmetic", f"`{ref.text}` is too large to compute", span)
        return value
    raise _error("not-constant", "this must be a number known before any workload is modelled", span)


