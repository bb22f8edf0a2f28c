"""Spec AST -> Program: names, devices, units and workloads looked up; every semantic error of a file, together.

resolver.py walks the statements and hands each to its function over the Scope (scope.py): catalogs.py (devices
and models), settings.py, tensor_expressions.py (tensors and expressions over them), subjects.py (workloads and
values; a workload's own checks are its kind's, gpuspec/kinds/<kind>/resolve.py) and claims.py; quantities.py and
checked.py hold the checks on numbers they share, options.py what several kinds take.
"""
from gpuspec.resolve.resolver import resolve, semantic_errors

__all__ = ["resolve", "semantic_errors"]
