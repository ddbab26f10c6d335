"""The TVM forms of multi-block ops whose values a fused chain of other ops reproduces.

softmax and log_softmax are recognized by their values, and ``log(softmax(x))`` has
log_softmax's values while ``exp(log_softmax(x))`` has softmax's: FuseOps makes each of
those a kernel of two ops (an anchor, then an elementwise op), which must not be read as
one op. The forms tell them apart: topi's softmax divides the exponentials by their sum
and calls only ``exp``; its log_softmax subtracts the log of that sum and divides nothing.
"""
from __future__ import annotations

from tir.expr import BufferLoad, Call, Div
from tir.functor import pre_order_visit

_FORMS = {
    "nn.softmax": ({"exp"}, set()),
    "nn.log_softmax": ({"exp", "log"}, {Div}),
}
"""op -> (intrinsics its form may call, arithmetic node types it never has)."""


def form_allowed(name: str, expr, operands) -> bool:
    """Whether ``expr``, up to the op's ``operands``, is written like ``name``'s TVM form
    (ops without a known form pass)."""
    form = _FORMS.get(name)
    if form is None:
        return True
    calls, forbidden = form
    stop = set(operands)
    seen_calls, seen_types = set(), set()

    def visit(n):
        if isinstance(n, BufferLoad) or n in stop:
            return False
        if isinstance(n, Call):
            seen_calls.add(n.op)
        seen_types.add(type(n))
        return True

    pre_order_visit(expr, visit)
    return seen_calls <= calls | {"if_then_else"} and not seen_types & forbidden
