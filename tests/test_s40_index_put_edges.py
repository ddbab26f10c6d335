"""Session 40: index_put is probed where a negative index's wrap-around turns.

Fuzz seed 4014 over a sample-like corpus: a mutant of TVM's index_put (accumulate) whose wrap
test of one axis reads ``< 1`` (or ``<= 0``) instead of ``< 0`` differs from index_put only
where that index is 0 -- random index draws may never hold it, and the answer stood.
"""
from __future__ import annotations

import opinfo
import tir


def test_index_put_probed_at_the_wrap_around_edges():
    from tests.fixture_util import FIXTURES

    text = (FIXTURES / "s40_index_put_accumulate.py").read_text()
    (_, func), = tir.parse(text).prim_funcs()
    assert [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops] == [("index_put", {"accumulate": True})]
    wrap = 'out_buf[(y2[v % T.int64(4)] + T.Cast("int64", y2[v % T.int64(4)] < T.int64(0)) * T.int64(5)'
    for mutated in ("< T.int64(1)", "<= T.int64(0)"):
        i = text.index(wrap)
        edited = text[:i] + wrap.replace("< T.int64(0)", mutated) + text[i + len(wrap):]
        (_, func), = tir.parse(edited).prim_funcs()
        assert opinfo.analyze(func).ops == ()
