"""A cache copy past the end of an inner axis of its buffer is no copy of the elements
inside: TVM flattens buffers row-major, so ``T_rms_norm[v0, 7, v2, v3]`` (axis 1 of 7) is
``T_rms_norm[v0 + 1, 0, v2, v3]``, written with what lies past the end of the transposed
``T_rms_norm_shared`` after the element's own copy ran -- the function TVM builds computes
no rms_norm (run with flat buffers, the C engine, it is off by up to 9). Such a copy is not
clipped (:func:`opinfo.block_loops.clip_copies`), and the function is not named."""
from __future__ import annotations

from tests.fixture_util import fixture_func, fixture_ops
from opinfo.block_loops import clip_copies
from opinfo.coverage import block_realizes

RMS = "s30c_rms_norm_copy_alias"


def _transposing_copy(func):
    (pred,) = [r.predicate for r, _ in block_realizes(func.body) if r.block.name == "T_rms_norm_shared"
               and r.block.body.buffer.name == "T_rms_norm"]
    return pred


def test_copy_past_an_inner_axis_is_not_clipped():
    func = fixture_func(RMS)
    assert _transposing_copy(clip_copies(func)) is _transposing_copy(func)


def test_rms_norm_with_an_aliasing_copy_is_not_named():
    assert fixture_ops(RMS) == []
