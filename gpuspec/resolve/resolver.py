"""The resolver: a spec's statements in order (devices, models, settings, names), with workload and claim
statements handed to their own modules; every semantic error of a file, together."""
from __future__ import annotations

import math

from gpuspec import devices, metrics, nodes, units
from gpuspec import models as llm_models
from gpuspec.devices import Device, Fact
from gpuspec.diagnostics import Diagnostic, SpecError, did_you_mean
from gpuspec.program import (
    SOURCES,
    Claim,
    Program,
)
from gpuspec.resolve.checked import constant, dimension_of, in_range, same_dimension, whole_number
from gpuspec.resolve.claim_statements import ClaimStatements
from gpuspec.resolve.scope import Invalid, Scope, TensorName, invalid
from gpuspec.resolve.workload_statements import WorkloadStatements
from gpuspec.text import Span
from gpuspec.workloads import (
    DTYPES,
    Tensor,
)

SETTINGS = ("tolerance", "threads_per_block", "sources", "mode", "registers_per_thread", "shared_memory_per_block",
            "sample_window")


def resolve(spec: nodes.Spec) -> Program:
    """Resolve one parsed spec. Raises SpecError with every semantic error of the file."""
    return Resolver(spec.path).run(spec)


class Resolver(WorkloadStatements, ClaimStatements):
    """Resolves one spec's statements in order; every semantic error of the file is collected."""

    def __init__(self, path: str):
        self.path = path
        self.scope = Scope()
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
            except Invalid as problem:
                self.errors.append(problem.diagnostic)
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
                raise invalid("unknown-device", f"unknown device `{statement.name}`", statement.span,
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
                    raise invalid("unknown-device", f"unknown device `{statement.base}`", statement.span,
                                  did_you_mean(statement.base, devices.known_names()))
            name = statement.name
        facts: dict[str, Fact] = {}
        self.scope.device = base  # device.field in an override refers to the base's facts
        for assignment in statement.assignments:
            try:
                facts[assignment.name] = self._override(assignment)
            except Invalid as problem:
                self.errors.append(problem.diagnostic)
        device = base.with_facts(name, facts) if facts or name != base.name else base
        self.scope.device, self.scope.device_span = device, statement.span

    def model(self, statement: nodes.ModelStatement) -> None:
        if statement.base is None:
            raise invalid("model-needs-base", f"`model {statement.name}` defines a model, so it needs a base",
                          statement.span, f"write `model {statement.name} from llama3-8b with layers = ...`, or "
                          f"`from none` and every field")
        if statement.base.lower() == "none":
            base = llm_models.blank(statement.name)
        else:
            base = self.scope.models.get(statement.base) or llm_models.lookup(statement.base)
            if base is None:
                raise invalid("unknown-model", f"unknown model `{statement.base}`", statement.span,
                              did_you_mean(statement.base, [*self.scope.models, *llm_models.known_names()]))
        facts = {}
        for assignment in statement.assignments:
            try:
                if assignment.name not in llm_models.FIELDS:
                    raise invalid("unknown-field", f"models have no field `{assignment.name}`", assignment.span,
                                  did_you_mean(assignment.name, llm_models.FIELDS))
                ref = self._quantity(assignment.value, {})
                value = constant(ref, assignment.value.span)
                same_dimension(dimension_of(ref), units.COUNT, assignment.name, assignment.value.span)
                if value != int(value) or value < 1:
                    raise invalid("bad-field", f"{assignment.name} must be a whole number of at least 1",
                                  assignment.value.span)
                facts[assignment.name] = Fact(assignment.name, value, value, units.COUNT, ref.text,
                                              note="set in the spec")
            except Invalid as problem:
                self.errors.append(problem.diagnostic)
        model = base.with_facts(statement.name, facts)
        spans = {assignment.name: assignment.span for assignment in statement.assignments}
        for problem in _inconsistent(model, spans, statement.span):
            self.errors.append(problem.diagnostic)
        self.scope.models[statement.name] = model

    def _override(self, assignment: nodes.Assignment) -> Fact:
        if assignment.name not in devices.FIELDS:
            raise invalid("unknown-field", f"devices have no field `{assignment.name}`", assignment.span,
                          did_you_mean(assignment.name, devices.FIELDS))
        ref = self._quantity(assignment.value, {})
        value = constant(ref, assignment.value.span)
        dimension = devices.FIELDS[assignment.name][0]
        same_dimension(dimension_of(ref), dimension, assignment.name, assignment.value.span)
        if dimension == units.COUNT and (value != int(value) or value < 1):
            raise invalid("bad-field", f"{assignment.name} must be a whole number of at least 1", assignment.value.span)
        if value <= 0:
            raise invalid("bad-field", f"{assignment.name} must be more than zero", assignment.value.span)
        return Fact(assignment.name, value, value, dimension, ref.text, note="set in the spec")

    def setting(self, setting: nodes.Setting) -> None:
        name, span = setting.name, setting.span
        if name not in SETTINGS:
            raise invalid("unknown-setting", f"unknown setting `{name}`", span,
                          did_you_mean(name, SETTINGS) or f"settings are: {', '.join(SETTINGS)}")
        if name in ("sources", "mode"):
            allowed = SOURCES if name == "sources" else ("eager", "fused")
            if not setting.words:
                raise invalid("bad-setting", f"`{name}` takes {' or '.join(allowed)}", span)
            for word in setting.words:
                if word not in allowed:
                    raise invalid("bad-setting", f"`{word}` is not a {name[:-1] if name == 'sources' else name}",
                                  span, did_you_mean(word, allowed) or f"use {', '.join(allowed)}")
            if name == "sources":
                self.scope.sources = tuple(dict.fromkeys(setting.words))
                self.scope.sources_set = True
            else:
                if len(setting.words) > 1:
                    raise invalid("bad-setting", "`mode` takes one word: eager or fused", span)
                self.scope.mode = setting.words[0]
            return
        if setting.amount is None:
            raise invalid("bad-setting", f"`{name}` takes a number", span)
        number, unit = setting.amount.low, self._unit(setting.amount.phrase)
        if name == "tolerance":
            self.scope.tolerance = self._tolerance(number, unit, span, from_file=True)
        elif name == "shared_memory_per_block":
            same_dimension(unit.dimension, units.BYTES, name, span)
            self.scope.shared_memory_per_block = in_range(number, unit, span)
        elif name == "sample_window":
            same_dimension(unit.dimension, units.TIME, name, span)
            window = in_range(number, unit, span)
            if window <= 0:
                raise invalid("bad-setting", "the sample window must be longer than zero", span)
            self.scope.sample_window = window
        else:
            whole = whole_number(number, unit, span, name)
            if name == "threads_per_block":
                self.scope.threads_per_block = whole
            else:
                self.scope.registers_per_thread = whole

    # --- names ------------------------------------------------------------------------------------

    def _bind(self, name: str, binding, span: Span) -> None:
        if name in self.scope.names:
            line = self.scope.names[name].line
            raise invalid("duplicate-name", f"`{name}` is already defined on line {line}", span,
                          f"use a new name, or claim its value with `{name} is ...`")
        if metrics.canonical(name) and not isinstance(binding, TensorName):
            pass  # a value may share a metric's name; inside a workload's claims the metric wins
        self.scope.names[name] = binding

    def tensor_binding(self, binding: nodes.TensorBinding) -> None:
        tensor = self._tensor(binding.name, binding.tensor)
        self._bind(binding.name, TensorName(tensor, binding.span.line), binding.span)

    def _tensor(self, name: str, tensor_type: nodes.TensorType) -> Tensor:
        if tensor_type.dtype not in DTYPES:
            raise invalid("unknown-dtype", f"unknown dtype `{tensor_type.dtype}`", tensor_type.span,
                          did_you_mean(tensor_type.dtype, DTYPES) or "dtypes: bf16, fp16, fp32, fp64, fp8, int8, ...")
        shape = []
        for dim in tensor_type.dims:
            if dim.size < 1 or dim.repeat < 1 or dim.repeat > 8:
                raise invalid("bad-shape", f"`{dim.size}^{dim.repeat}` is not a shape", dim.span,
                              "dimensions are whole numbers of at least 1; powers from 1 to 8")
            shape.extend([dim.size] * dim.repeat)
        if math.prod(shape) > 10**18:
            raise invalid("bad-shape", "the tensor is too large to describe (over 10¹⁸ elements)", tensor_type.span)
        return Tensor(name, DTYPES[tensor_type.dtype][1], tuple(shape))

    def _require_device(self, span: Span) -> Device:
        if self.scope.device is None:
            raise invalid("no-device", "no device is set for this workload", span,
                          "add a line such as `device H100-SXM` above it")
        return self.scope.device

    def _unknown_name(self, name: str, span: Span, tensors: bool = False, metric_names=()) -> Invalid:
        known = [*self.scope.names, *metric_names]
        hint = did_you_mean(name, known)
        if hint is None and tensors:
            hint = f"define it first (`{name} = bf16[4096, 4096]`), or give its type with `on 4096² bf16`"
        return invalid("unknown-name", f"unknown name `{name}`", span, hint)


def _inconsistent(model, spans: dict[str, Span], span: Span) -> list[Invalid]:
    """Fields of a model that contradict each other: more KV heads than heads, more experts per token than experts.
    Each error points at the field the spec set (or the statement, when both came from the base)."""
    found = []
    for few, many, rule in (("kv_heads", "heads", "each key/value head serves a group of query heads, so kv_heads "
                             "divides heads (kv_heads = heads without grouped-query attention)"),
                            ("experts_per_token", "experts", "a token is routed to some of the experts")):
        low, high = model.fact(few), model.fact(many)
        if low is None or high is None:
            continue
        wrong = low.value > high.value or (few == "kv_heads" and high.value % low.value)
        if wrong:
            relation = "more than" if low.value > high.value else "not a divisor of"
            found.append(invalid("inconsistent-model", f"{few} ({units.format_count(low.value)}) is {relation} "
                                 f"{many} ({units.format_count(high.value)})", spans.get(few) or spans.get(many) or span,
                                 rule))
    return found
