"""Workload statements: a subject that mentions tensors, a stream, a decode, prefill or training step becomes a
workload of its kind, with the options and settings that kind takes checked; and an observed figure attached."""
from __future__ import annotations

import attrs

from gpuspec import models as llm_models
from gpuspec import nodes, units
from gpuspec.devices import Device
from gpuspec.diagnostics import did_you_mean
from gpuspec.program import (
    Claim,
    Expected,
    MetricRef,
    NamedRef,
)
from gpuspec.resolve.checked import (
    TOKEN_RATE,
    constant,
    describe,
    dimension_of,
    expr_text,
    free_names,
    in_range,
    needs_model,
    same_dimension,
    whole_number,
    with_article,
    within_limit,
)
from gpuspec.resolve.scope import TensorName, ValueName, WorkloadName, invalid
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

DECODE_SETTINGS = ("batch", "context", "kernels_per_layer", "weights", "kv", "tp", "prompt")
KERNELS_PER_LAYER = {"eager": 15, "compiled": 8}  # see model/decode.py for what each counts
TRAINING_SETTINGS = ("batch", "context", "gpus", "weights")
STREAMABLE = ("elementwise", "rowwise", "attention", "matmul")  # workloads of kernels a stream can repeat
# What an observed figure may be, per workload kind (model/observed.py turns each into a time).
_OBSERVABLE = {
    units.TIME: None,  # every kind
    TOKEN_RATE: ("decode", "training"),
    units.FLOP_RATE: ("elementwise", "matmul", "rowwise", "attention", "decode", "training"),
    units.BANDWIDTH: ("elementwise", "matmul", "rowwise", "attention", "decode", "collective"),
}
_OBSERVABLE_WORDS = {units.TIME: "a time (`9.35 ms`)", TOKEN_RATE: "a token rate (`107 tokens/s`)",
                     units.FLOP_RATE: "a FLOP rate per GPU (`400 TFLOP/s`)",
                     units.BANDWIDTH: "a bandwidth (`1.4 TB/s`)"}
# The utilizations an observed figure can be held to: no run beats the device's peaks.
_POSSIBLE = {"decode": ("observed_mbu", "observed_mfu"), "training": ("observed_mfu",),
             **{kind: ("observed_mbu", "observed_mfu") for kind in ("elementwise", "matmul", "rowwise", "attention")}}


class WorkloadStatements:
    """The part of the resolver that turns subjects into workloads (mixed into Resolver)."""

    def subject(self, subject: nodes.Subject) -> None:
        local: dict[str, Tensor] = {}
        if subject.options.on is not None:
            for name in sorted(free_names(subject.expr)):
                if name not in self.scope.names:
                    local[name] = self._tensor(name, subject.options.on)
        statement = subject.text.split("\n")[0].strip()
        named = self.scope.names.get(subject.expr.id) if isinstance(subject.expr, nodes.Name) else None
        if isinstance(named, WorkloadName) and subject.name is None:  # `y is ...`: claims on a workload already named
            if subject.options.span is not None:
                raise invalid("options-on-a-name", f"`{subject.expr.id}` is already defined; its options go where "
                              "it is defined", subject.options.span)
            self._claims(subject.claims, statement, workload=named.workload, subject_ref=None)
            return
        workload_call = isinstance(subject.expr, nodes.Call) \
            and subject.expr.function in (*ROWWISE_OPS, "attention", *COLLECTIVES)
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
                self._bind(subject.name, WorkloadName(workload, subject.span.line), subject.span)
            if observed is not None:
                self._possible(observed, statement, workload)
            self._claims(subject.claims, statement, workload=workload, subject_ref=None)
            return
        options = subject.options
        if options.on is not None or options.mode or options.threads or options.graph or options.observed:
            raise invalid("not-a-workload", "`on`, `eager`, `fused`, `as a graph`, `with ... threads` and `observed` "
                          "describe workloads, but this expression has no tensors", subject.options.span)
        ref = self._quantity(subject.expr, {})
        if not needs_model(ref):  # a value that cannot be computed (`1 B / 0 s`) is an error where it is written
            constant(ref, subject.expr.span)
        if subject.name:
            ref = NamedRef(subject.name, ref, dimension_of(ref), subject.name)
            self._bind(subject.name, ValueName(ref, subject.span.line), subject.span)
        elif not subject.claims.items:
            raise invalid("nothing-claimed", "this line claims nothing", subject.span,
                          "add `is` and a claim, e.g. `... is ≈ 20 µs`, or a comparison: `... ≈ 20 µs`")
        self._claims(subject.claims, statement, workload=None, subject_ref=ref)

    def _mentions_tensor(self, expr: nodes.Expr) -> bool:
        return any(isinstance(self.scope.names.get(n), (TensorName, WorkloadName)) for n in free_names(expr))

    def _workload(self, subject: nodes.Subject, local: dict[str, Tensor], statement: str) -> Elementwise:
        device = self._require_device(subject.span)
        tree = self._tensor_expr(subject.expr, local)
        threads = self.scope.threads_per_block
        if subject.options.threads is not None:
            threads = whole_number(subject.options.threads, units.Unit("", 1.0, units.COUNT),
                                   subject.options.threads.span, "threads per block")
        mode = subject.options.mode or self.scope.mode
        if subject.options.tile is not None:
            raise invalid("tiles-need-matmul", "`with ... tiles` describes a matmul (`a @ b`)", subject.options.span)
        where = subject.options.threads.span if subject.options.threads is not None else subject.span
        within_limit(device, "max_threads_per_block", threads, "threads per block", where)
        within_limit(device, "max_registers_per_thread", self.scope.registers_per_thread, "registers per thread",
                     subject.span)
        within_limit(device, "shared_memory_per_block", self.scope.shared_memory_per_block,
                     "shared memory per block", subject.span)
        return Elementwise(tree, mode, threads, device, self.scope.registers_per_thread,
                           self.scope.shared_memory_per_block, text=statement)

    def _matmul(self, subject: nodes.Subject, local: dict[str, Tensor], statement: str) -> Matmul:
        device = self._require_device(subject.span)
        options = subject.options
        if options.mode or options.threads is not None or options.graph:
            raise invalid("matmul-options", "a matmul takes `with ROWSxCOLUMNS tiles`", options.span)
        a, b = (self._tensor_expr(side, local) for side in (subject.expr.left, subject.expr.right))
        for side, tensor in ((subject.expr.left, a), (subject.expr.right, b)):
            if not isinstance(tensor, Tensor) or len(tensor.shape) < 2:
                raise invalid("matmul-operand", "each side of `@` is a tensor of two or more dimensions", side.span,
                              "name it first: `a = bf16[4096, 8192]`")
        if a.shape[-1] != b.shape[-2]:
            raise invalid("shape-mismatch", f"`@` needs A's last dimension to equal B's second to last: "
                          f"{list(a.shape)} @ {list(b.shape)}", subject.expr.span)
        if a.dtype != b.dtype:
            raise invalid("dtype-mismatch", f"`@` multiplies tensors of one dtype, not {a.dtype} and {b.dtype}",
                          subject.expr.span)
        try:
            broadcast(a.shape[:-2], b.shape[:-2])
        except ValueError as error:
            raise invalid("shape-mismatch", str(error), subject.expr.span) from None
        tile = options.tile or (128, 128)
        if min(tile) < 1:
            raise invalid("bad-tile", "a tile has at least one row and one column", options.span)
        return Matmul(a, b, tile, device, text=statement)

    def _call_options(self, subject: nodes.Subject, what: str) -> str:
        """The mode of a row-wise or attention workload: eager or fused; other options are errors."""
        options = subject.options
        if options.threads is not None or options.graph or options.tile is not None:
            raise invalid(f"{what}-options", f"{with_article(what)} workload takes only "
                          "`eager` or `fused`", options.span)
        mode = options.mode or self.scope.mode
        if mode not in ("eager", "fused"):
            raise invalid(f"{what}-options", f"{with_article(what)} workload runs `eager` or "
                          f"`fused`, not `{mode}`", options.span)
        return mode

    def _tensor_args(self, call: nodes.Call, local: dict[str, Tensor], count: int, what: str) -> list[Tensor]:
        if len(call.args) != count:
            raise invalid("wrong-arguments", f"`{call.function}` takes {count} tensor argument"
                          f"{'s' * (count > 1)}, not {len(call.args)}", call.span,
                          f"write `{call.function}({', '.join(('x',) if count == 1 else ('q', 'k', 'v'))})`")
        found = []
        for arg in call.args:
            tensor = self._tensor_expr(arg, local)
            if not isinstance(tensor, Tensor):
                raise invalid(f"{what}-operand", f"each argument of `{call.function}` is a named tensor",
                              arg.span, "name it first: `x = bf16[8192, 4096]`")
            found.append(tensor)
        return found

    def _rowwise(self, subject: nodes.Subject, local: dict[str, Tensor], statement: str) -> Rowwise:
        device = self._require_device(subject.span)
        call = subject.expr
        mode = self._call_options(subject, "rowwise")
        (x,) = self._tensor_args(call, local, 1, "rowwise")
        if not x.shape:
            raise invalid("rowwise-operand", f"`{call.function}` works over the last axis, and `{x.name}` is 0-d",
                          call.args[0].span, "give it at least one dimension: `x = bf16[8192, 4096]`")
        if x.dtype not in FLOAT_DTYPES:
            raise invalid("dtype-mismatch", f"`{call.function}` takes a floating-point tensor, not {x.dtype}",
                          call.args[0].span)
        return Rowwise(call.function, x, mode, device, text=statement)

    def _attention(self, subject: nodes.Subject, local: dict[str, Tensor], statement: str) -> Attention:
        device = self._require_device(subject.span)
        call = subject.expr
        mode = self._call_options(subject, "attention")
        q, k, v = self._tensor_args(call, local, 3, "attention")
        for arg, tensor in zip(call.args, (q, k, v)):
            if len(tensor.shape) != 4:
                raise invalid("attention-operand", f"`{tensor.name}` is {list(tensor.shape)}; attention takes "
                              "4-d tensors: [batch, heads, seq, head_dim]", arg.span)
            if tensor.dtype not in ("bf16", "fp16"):
                raise invalid("dtype-mismatch", f"attention runs on bf16 or fp16 tensors, not {tensor.dtype} "
                              f"(`{tensor.name}`)", arg.span)
        if len({q.dtype, k.dtype, v.dtype}) > 1:
            raise invalid("dtype-mismatch", f"q, k and v share one dtype, not {q.dtype}, {k.dtype} and {v.dtype}",
                          call.span)
        if k.shape != v.shape:
            raise invalid("shape-mismatch", f"k and v have one shape, not {list(k.shape)} and {list(v.shape)}",
                          call.span)
        if k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]:
            raise invalid("shape-mismatch", f"q and k share batch and head_dim: {list(q.shape)} and "
                          f"{list(k.shape)}", call.span)
        if q.shape[1] % k.shape[1]:
            raise invalid("shape-mismatch", f"kv_heads ({k.shape[1]}) must divide heads ({q.shape[1]})", call.span,
                          "grouped-query attention shares each k and v head among heads / kv_heads query heads")
        return Attention(q, k, v, mode, device, text=statement)

    def _collective(self, subject: nodes.Subject, statement: str) -> Collective:
        call, options = subject.expr, subject.options
        device = self._require_device(subject.span)
        if options.across is None:
            raise invalid("collective-needs-gpus", f"`{call.function}` needs the GPUs it runs across", call.span,
                          f"write `{call.function}(1 GB) across 8 GPUs over nvlink`")
        if options.mode or options.threads is not None or options.graph or options.tile or options.on is not None:
            raise invalid("collective-options", "a collective takes `across N GPUs over nvlink` (or pcie)",
                          options.span)
        if len(call.args) != 1:
            raise invalid("wrong-arguments", f"`{call.function}` takes one argument: the buffer's size", call.span)
        count, noun, link = options.across
        gpus = whole_number(count, units.Unit("", 1.0, units.COUNT), count.span, "the number of GPUs")
        if gpus < 2:
            raise invalid("expected-whole-number", "a collective needs at least 2 GPUs", count.span)
        if noun.lower() not in ("gpus", "gpu", "devices"):
            raise invalid("syntax-word", f"`across {count.text} {noun}`: write `across {count.text} GPUs`",
                          options.span)
        link = (link or ("nvlink" if device.fact("nvlink_bandwidth") else "pcie")).lower()
        if link not in ("nvlink", "pcie"):
            raise invalid("unknown-link", f"unknown link `{link}`", options.span,
                          did_you_mean(link, ("nvlink", "pcie")) or "links: nvlink, pcie")
        if device.fact(f"{link}_bandwidth") is None:
            raise invalid("missing-fact", f"device {device.name} has no `{link}_bandwidth`", options.span,
                          f"set it: `device {device.name} with {link}_bandwidth = ...`")
        size = self._quantity(call.args[0], {})
        same_dimension(dimension_of(size), units.BYTES, "the buffer", call.args[0].span)
        value = constant(size, call.args[0].span)
        if value <= 0:
            raise invalid("bad-size", "the buffer must be larger than zero", call.args[0].span)
        return Collective(call.function, value, gpus, link, device, text=statement)

    def _sample_window(self, device: Device) -> float:
        if self.scope.sample_window is not None:
            return self.scope.sample_window
        window = device.fact("utilization_window")
        return window.value if window is not None else 1 / 6

    def _stream(self, subject: nodes.Subject, statement: str) -> Stream:
        stream, options = subject.expr, subject.options
        if options.on is not None or options.threads is not None or options.mode:
            raise invalid("stream-options", "a stream takes only `as a CUDA graph`; give other options to the "
                          "workload it launches", options.span)
        count = whole_number(stream.count, units.Unit("", 1.0, units.COUNT), stream.count.span, "a launch count")
        bound = self.scope.names.get(stream.workload)
        if not isinstance(bound, WorkloadName):
            if bound is None:
                raise self._unknown_name(stream.workload, stream.span)
            raise invalid("not-a-workload", f"`{stream.workload}` is not a workload, so it cannot be launched",
                          stream.span)
        if bound.workload.kind not in STREAMABLE:
            kind = with_article(bound.workload.kind)
            raise invalid("not-a-kernel", f"`{stream.workload}` is {kind} workload; a stream "
                          f"launches {', '.join(STREAMABLE[:-1])} or {STREAMABLE[-1]} workloads", stream.span)
        device = bound.workload.device
        return Stream(bound.workload, count, options.graph, device, self._sample_window(device), text=statement)

    def _decode(self, subject: nodes.Subject, statement: str) -> DecodeStep:
        decode, options = subject.expr, subject.options
        device = self._require_device(subject.span)
        if options.on is not None or options.threads is not None:
            raise invalid("decode-options", "a decode step takes `eager`, `compiled` and `as a CUDA graph`",
                          options.span)
        model = self._llm(decode)
        mode = "compiled" if options.mode in ("compiled", "fused") else "eager"
        values: dict[str, object] = {"batch": 1, "context": 0, "weights": "bf16"}
        for setting in decode.settings:
            if setting.name not in DECODE_SETTINGS:
                raise invalid("unknown-setting", f"decode steps have no setting `{setting.name}`", setting.span,
                              did_you_mean(setting.name, DECODE_SETTINGS) or f"settings: {', '.join(DECODE_SETTINGS)}")
            if setting.name in ("weights", "kv"):
                values[setting.name] = self._dtype_setting(setting)
            else:
                values[setting.name] = self._count_setting(setting, least=0 if setting.name == "context" else 1)
        if "prompt" in values:  # a prefill's prompt is the context it builds
            if decode.phase != "prefill":
                raise invalid("unknown-setting", "`prompt` is a prefill's setting; a decode step has `context`",
                              decode.span)
            values["context"] = values["prompt"]
        if decode.phase == "prefill" and int(values["context"]) < 1:  # type: ignore[arg-type]
            raise invalid("prefill-needs-prompt", "a prefill needs its prompt's length", decode.span,
                          f"write `prefill {decode.model}, batch 1, prompt 2048`")
        per_layer = int(values.get("kernels_per_layer", KERNELS_PER_LAYER[mode]))  # type: ignore[arg-type]
        if int(values.get("tp", 1)) > 1 and device.fact("nvlink_bandwidth") is None:  # type: ignore[arg-type]
            raise invalid("missing-fact", f"tensor parallelism needs NVLink, and {device.name} has no "
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
            raise invalid("training-options", "a training step takes its settings after commas, and `observed ...`",
                          options.span, f"write `train {train.model}, batch 512, context 8192, gpus 64`")
        model = self._llm(train)
        values: dict[str, object] = {"batch": 1, "gpus": 1, "weights": "bf16"}
        for setting in train.settings:
            if setting.name not in TRAINING_SETTINGS:
                raise invalid("unknown-setting", f"training steps have no setting `{setting.name}`", setting.span,
                              did_you_mean(setting.name, TRAINING_SETTINGS)
                              or f"settings: {', '.join(TRAINING_SETTINGS)}")
            if setting.name == "weights":
                values["weights"] = self._dtype_setting(setting)
            else:
                values[setting.name] = self._count_setting(setting, least=1)
        if "context" not in values:
            raise invalid("training-needs-context", "a training step needs the length of its sequences", train.span,
                          f"write `train {train.model}, batch 512, context 8192`")
        return TrainingStep(model, device, int(values["batch"]), int(values["context"]),  # type: ignore[arg-type]
                            int(values["gpus"]), str(values["weights"]), text=statement)  # type: ignore[arg-type]

    def _llm(self, decode: nodes.Decode):
        model = self.scope.models.get(decode.model) or llm_models.lookup(decode.model)
        if model is None:
            raise invalid("unknown-model", f"unknown model `{decode.model}`", decode.span,
                          did_you_mean(decode.model, [*self.scope.models, *llm_models.known_names()])
                          or "`gpuspec models` lists the catalog")
        return model

    def _dtype_setting(self, setting: nodes.DecodeSetting) -> str:
        if setting.word not in DTYPES:
            raise invalid("unknown-dtype", f"`{setting.word or setting.number.text}` is not a dtype",
                          setting.span, did_you_mean(setting.word or "", DTYPES))
        return DTYPES[setting.word][1]

    def _count_setting(self, setting: nodes.DecodeSetting, least: int) -> int:
        if setting.number is None:
            raise invalid("expected-number", f"`{setting.name}` takes a whole number", setting.span)
        value = in_range(setting.number, units.Unit("", 1.0, units.COUNT), setting.span)
        if value != int(value) or value < least:
            raise invalid("expected-whole-number", f"{setting.name} must be a whole number of at least "
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
            raise invalid("observed-figure", f"`observed {written}` is in {describe(unit.dimension)}, which says "
                          f"nothing about {with_article(workload.kind)} workload",
                          observed.span, f"observe {' or '.join(allowed)}")
        value = in_range(observed.number, unit, observed.number.span)
        if value <= 0:
            raise invalid("observed-figure", "an observed figure is larger than zero", observed.span)
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

    def _tensor_expr(self, expr: nodes.Expr, local: dict[str, Tensor]):
        if isinstance(expr, nodes.Quantity):
            if expr.unit:
                raise invalid("unit-in-tensor-expression", f"a constant in a tensor expression takes no unit "
                              f"(`{expr.unit}`)", expr.span)
            return Scalar(in_range(expr.number, units.Unit("", 1.0, units.COUNT), expr.span))
        if isinstance(expr, nodes.Name):
            if expr.id in local:
                return local[expr.id]
            bound = self.scope.names.get(expr.id)
            if isinstance(bound, TensorName):
                return bound.tensor
            if isinstance(bound, WorkloadName):
                w = bound.workload
                if w.kind == "matmul":  # its result: C
                    batch = broadcast(w.a.shape[:-2], w.b.shape[:-2])
                    return Tensor(expr.id, w.a.dtype, (*batch, w.a.shape[-2], w.b.shape[-1]))
                if w.kind == "rowwise":
                    return Tensor(expr.id, w.x.dtype, w.out_shape)
                if w.kind == "attention":
                    return Tensor(expr.id, w.q.dtype, w.q.shape)
                if w.kind != "elementwise":
                    raise invalid("not-a-tensor", f"`{expr.id}` is {with_article(w.kind)}, not a tensor", expr.span)
                return Tensor(expr.id, result_dtype(w.expr) or "fp32", result_shape(w.expr))
            if isinstance(bound, ValueName):
                return Scalar(constant(bound.ref, expr.span))
            raise self._unknown_name(expr.id, expr.span, tensors=True)
        if isinstance(expr, nodes.BinOp):
            if expr.op == "@":
                raise invalid("matmul-inside", "a matmul (`@`) is a workload of its own; name it, then use its result",
                              expr.span, "c = a @ b, then d = c * 2")
            args = (self._tensor_expr(expr.left, local), self._tensor_expr(expr.right, local))
            node = Apply(BINARY_OPS[expr.op], args, expr_text(expr))
        elif isinstance(expr, nodes.Neg):
            node = Apply("neg", (self._tensor_expr(expr.operand, local),), expr_text(expr))
        elif isinstance(expr, nodes.Call):
            if expr.function in (*ROWWISE_OPS, "attention"):
                what = "attention" if expr.function == "attention" else "row-wise operation"
                raise invalid(f"{'attention' if what == 'attention' else 'rowwise'}-inside",
                              f"`{expr.function}` is a{'n' if what == 'attention' else ''} {what}, a workload of "
                              "its own; name it, then use its result", expr.span,
                              f"y = {expr_text(expr)}, then use y")
            known = {*UNARY_FLOPS, "max", "min"}
            if expr.function not in known:
                raise invalid("unknown-function", f"unknown elementwise function `{expr.function}`", expr.span,
                              did_you_mean(expr.function, sorted(known)))
            arity = 2 if expr.function in ("max", "min") else 1
            if len(expr.args) != arity:
                raise invalid("wrong-arguments", f"`{expr.function}` takes {arity} argument{'s' * (arity > 1)}, "
                              f"not {len(expr.args)}", expr.span)
            op = BINARY_OPS.get(expr.function, expr.function)
            node = Apply(op, tuple(self._tensor_expr(a, local) for a in expr.args), expr_text(expr))
        else:
            raise invalid("not-elementwise", "device fields and metrics cannot appear in a tensor expression",
                          expr.span)
        try:
            result_shape(node)
        except ValueError as error:
            raise invalid("shape-mismatch", str(error), expr.span) from None
        return node
