"""``verify.defined_at``: whether an answer's op is defined at a binding of the symbolic
extents. TVM 0.27's legalized ``reshape`` of an ``(n,)`` vector to (1, 1, 3) (fixture) is a
reshape at n = 3 only: the fuzzer compares a mutant with the original there, not at n = 5
(where the two may differ while neither is a reshape)."""
from __future__ import annotations

import tir
import tir.topi
from opinfo import analyze, verify_op
from opinfo.verify import defined_at

from tests.fixture_util import FIXTURES


def _func():
    mod = tir.parse((FIXTURES / "s47_reshape_symbolic_to_3.py").read_text())
    (func,) = [f for _, f in mod.prim_funcs()]
    return func


def test_reshape_defined_at_its_element_count_only():
    func = _func()
    (op,) = analyze(func).ops
    assert op.name == "reshape" and tuple(op.attrs["shape"]) == (1, 1, 3)
    assert [v for v in range(1, 9) if defined_at(func, op, v)] == [3]
    assert verify_op(func, op) is True  # built at the one binding it takes


def test_broadcast_add_defined_at_every_batch():
    n = tir.SizeVar("n", tir.dtype.int64)
    func = tir.topi.lower("add", [((n, 4), "float32"), ((1, 4), "float32")])
    (op,) = analyze(func).ops
    assert op.name == "add"
    assert all(defined_at(func, op, v) for v in (1, 2, 5, 13))
