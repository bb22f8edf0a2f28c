"""Tensors as written (`bf16[4096, 4096]`, `on 4096² bf16`) and expressions over them, checked: dtypes, shapes
that broadcast, the functions an elementwise expression may call; the result of a named workload as a tensor."""
from __future__ import annotations

import math

from gpuspec import kinds, nodes, units
from gpuspec.diagnostics import did_you_mean
from gpuspec.resolve.checked import constant, expr_text, free_names, in_range, with_article
from gpuspec.resolve.scope import Scope, TensorName, ValueName, WorkloadName, bind, invalid, unknown_name
from gpuspec.tensors import (
    BINARY_OPS,
    CAST_DTYPES,
    CASTS,
    DTYPES,
    FUNCTIONS,
    MOVES,
    Apply,
    Node,
    Scalar,
    Tensor,
    cast_op,
    is_constant,
    without_tensor,
    result_dtype,
    result_shape,
)


def tensor(name: str, tensor_type: nodes.TensorType) -> Tensor:
    """The tensor `name` of the type written."""
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


def tensor_binding(binding: nodes.TensorBinding, scope: Scope) -> None:
    """`x = bf16[4096, 4096]`."""
    bind(scope, binding.name, TensorName(tensor(binding.name, binding.tensor), binding.span.line), binding.span)


def mentions_tensor(scope: Scope, expr: nodes.Expr) -> bool:
    return any(isinstance(scope.names.get(n), (TensorName, WorkloadName)) for n in free_names(expr))


def tensor_expression(scope: Scope, expr: nodes.Expr, local: dict[str, Tensor]) -> Node:
    """An expression over tensors as the tree a workload holds; `local` are the tensors `on ...` declared."""
    if isinstance(expr, nodes.Quantity):
        if expr.unit:
            raise invalid("unit-in-tensor-expression", f"a constant in a tensor expression takes no unit "
                          f"(`{expr.unit}`)", expr.span)
        return Scalar(in_range(expr.number, units.Unit("", 1.0, units.COUNT), expr.span))
    if isinstance(expr, nodes.Name):
        if expr.id in local:
            return local[expr.id]
        bound = scope.names.get(expr.id)
        if isinstance(bound, TensorName):
            return bound.tensor
        if isinstance(bound, WorkloadName):
            result = getattr(bound.workload, "result", None)  # what a workload computes: C of a matmul, ...
            if result is None:
                raise invalid("not-a-tensor", f"`{expr.id}` is {kinds.of(bound.workload).article}, not a tensor",
                              expr.span)
            return result(expr.id)
        if isinstance(bound, ValueName):
            return Scalar(constant(bound.ref, expr.span))
        raise unknown_name(scope, expr.id, expr.span, tensors=True)
    if isinstance(expr, (nodes.BinOp, nodes.Call)):
        _not_a_workload(expr)
    if isinstance(expr, nodes.BinOp):
        args = (tensor_expression(scope, expr.left, local), tensor_expression(scope, expr.right, local))
        node = Apply(BINARY_OPS[expr.op], args, expr_text(expr))
    elif isinstance(expr, nodes.Neg):
        node = Apply("neg", (tensor_expression(scope, expr.operand, local),), expr_text(expr))
    elif isinstance(expr, nodes.Call):
        if expr.function in DTYPES and expr.function not in CASTS:
            raise invalid("bad-cast", f"`{expr.function}(...)` is not a cast gpuspec models: an expression casts to "
                          f"a floating dtype ({', '.join(CAST_DTYPES)})", expr.span,
                          "tf32 is how a matmul computes fp32, not a dtype a tensor holds" if expr.function == "tf32"
                          else "write the integer tensor as an input of its own")
        if expr.function not in FUNCTIONS:
            raise invalid("unknown-function", f"unknown elementwise function `{expr.function}`", expr.span,
                          did_you_mean(expr.function, sorted(FUNCTIONS)))
        arity = FUNCTIONS[expr.function]
        if len(expr.args) != arity:
            raise invalid("wrong-arguments", f"`{expr.function}` takes {arity} argument{'s' * (arity > 1)}, "
                          f"not {len(expr.args)}", expr.span)
        args = tuple(tensor_expression(scope, a, local) for a in expr.args)
        node = Apply(_operation(expr, args), args, expr_text(expr))
    else:
        raise invalid("not-elementwise", "device fields and metrics cannot appear in a tensor expression",
                      expr.span)
    try:
        result_shape(node)
    except ValueError as error:
        raise invalid("shape-mismatch", str(error), expr.span) from None
    return node


def _operation(call: nodes.Call, args: tuple[Node, ...]) -> str:
    """The operation a call names, its argument checked where a cast or a move needs a tensor."""
    problem = without_tensor(call.function, expr_text(call)) if is_constant(args[0]) else None
    if problem is not None:  # `fp32(2)`, `copy(2)`
        code, message, help = problem
        raise invalid(code, message, call.args[0].span, help)
    if call.function in CASTS:
        if result_dtype(args[0]) == CASTS[call.function]:
            raise invalid("bad-cast", f"`{expr_text(call)}` does nothing: its argument is {CASTS[call.function]} "
                          "already (PyTorch's `.to` returns the tensor itself and launches no kernel)", call.span,
                          "leave the cast out, or cast to another dtype")
        return cast_op(call.function)
    if call.function in MOVES:
        if not isinstance(args[0], Tensor):
            raise invalid("move-operand", f"`{call.function}` takes a named tensor (or a workload's result), not "
                          "an expression", call.args[0].span,
                          f"name the expression first: y = ..., then {call.function}(y)")
        if call.function == "transpose" and len(args[0].shape) < 2:
            raise invalid("move-operand", f"`transpose` swaps the last two dimensions; `{args[0].name}` has "
                          f"{len(args[0].shape)}", call.args[0].span, "a matrix or a batch of them")
        return call.function
    return BINARY_OPS.get(call.function, call.function)


def _not_a_workload(expr: nodes.BinOp | nodes.Call) -> None:
    """An error for a kernel workload written inside an expression (`softmax(x) * 2`): it is a workload of its own."""
    kind = kinds.recognizing(expr)
    if not kind.streamable or kind is kinds.FALLBACK:  # not a workload of kernels, or an elementwise expression
        return
    if isinstance(expr, nodes.BinOp):
        raise invalid(f"{kind.name}-inside", f"a {kind.noun} (`{expr.op}`) is a workload of its own; name it, then "
                      "use its result", expr.span, "c = a @ b, then d = c * 2")
    raise invalid(f"{kind.name}-inside", f"`{expr.function}` is {with_article(kind.noun)}, a workload of its own; "
                  "name it, then use its result", expr.span, f"y = {expr_text(expr)}, then use y")
