"""Spec AST -> Program: names, devices, units and workloads looked up; every semantic error of a file, together.

resolver.py walks the statements; workload_statements.py and claim_statements.py resolve the two kinds of
subject; checked.py holds the checks on numbers they share; scope.py what is known at each point of the file.
"""
from gpuspec.resolve.resolver import resolve

__all__ = ["resolve"]
