"""Backends and the explicit registry that names them.

A backend is an object with:

- ``name``: the ``Compiler`` attribute value it owns;
- ``check(op) -> str | None``: why a recovered op (OpInfo) cannot be offloaded, or None;
- ``patterns() -> [(name, Pattern)]``: its composite patterns, most specific first;
- ``codegen(mod, func_name) -> ExternalModule``: compile one ``Compiler`` function.

The registry is built on request by :func:`default_registry` (nothing registers itself on
import); callers may pass their own mapping of backends.
"""
from __future__ import annotations

from typing import Callable

import attrs

from tir.node import Map


@attrs.frozen(eq=False)
class ExternalModule:
    """A compiled region: callable as ``fn(*inputs, *preallocated_outputs)``."""

    symbol: str
    backend: str
    fn: Callable = attrs.field(repr=False)
    source: object = attrs.field(default=None, repr=False)
    """What was compiled (an ONNX ModelProto, C source text)."""

    def __call__(self, *args):
        return self.fn(*args)


class UnknownName(KeyError):
    """A backend or pattern name the registry does not know (the message lists the known ones)."""


@attrs.frozen
class Registry:
    """Backends by name."""

    backends: Map = attrs.field(converter=Map)

    def __getitem__(self, name: str):
        try:
            return self.backends[name]
        except KeyError:
            known = ", ".join(self.backends)
            raise UnknownName(f"unknown backend {name!r}; known backends: {known}") from None

    def __contains__(self, name: str) -> bool:
        return name in self.backends

    def names(self) -> list:
        return list(self.backends)


def default_registry() -> Registry:
    """The project's backends: ``onnxruntime`` and ``c``."""
    from .c_backend import CBackend
    from .onnx_backend import OnnxRuntimeBackend

    return Registry({"onnxruntime": OnnxRuntimeBackend(), "c": CBackend()})
