"""Reads past the end of a copy (:func:`opinfo.coverage.reads_past_copies`). A probe that made
an intermediate one row shorter turned TVM 0.27's conv1d_transpose (fixture s44_*dilate*, a
corpus case) into ``data_dilate[b, ...] = x[b, ...]`` storing two batch rows into a buffer of
one, the convolution reading ``data_dilate[1, ...]``: storage past the buffer. Normalizing read
the copy through and the convolution read ``x[1, ...]``, a valid element: it was named. A read
past the end of an axis a copy fills from a longer axis is now refused; a read past the end
that stays one after reading through is not this check's (TVM's own max-pool gradient reads
one row past its argmax buffer and past that buffer's reindex copy: fixture s44_*reindex*, a
generated case, still named)."""
from __future__ import annotations

from opinfo.api import analyze
from opinfo.coverage import reads_past_copies

from tests.fixture_util import fixture_func

DILATE = "s44_conv1d_transpose_dilate_copy"
OLD = "data_dilate = T.sblock_alloc_buffer((T.int64(2), T.int64(8), T.int64(8)))"


def _shortened():
    def edit(text):
        assert text.count(OLD) == 1
        return text.replace(OLD, "data_dilate = T.sblock_alloc_buffer((T.int64(1), T.int64(8), T.int64(8)))")
    return fixture_func(DILATE, edit)


def test_the_corpus_function_is_named():
    func = fixture_func(DILATE)
    assert not reads_past_copies(func)
    assert [op.name for op in analyze(func).ops] == ["nn.conv1d_transpose"]


def test_a_read_past_a_shortened_copy_is_refused():
    func = _shortened()
    assert reads_past_copies(func)
    info = analyze(func)
    assert info.ops == () and "past the end of a copy" in info.refused


def test_tvms_own_read_past_a_reindex_copy_is_not_this_checks():
    func = fixture_func("s44_max_pool2d_backward_reindex")
    assert not reads_past_copies(func)
    assert [op.name for op in analyze(func).ops] == ["grad.max_pool2d_backward"]


def test_a_copy_reading_past_a_shortened_cache_at_a_modulo_index_is_refused():
    # TVM 0.27's cache_read of a reshape (fixture s44_*mod*, a generated case) reads
    # x_shared[v % 5]; its cache made one element short, the read of element 4 lies past it
    name = "s44_reshape_cache_mod"
    old = 'x_shared = T.alloc_buffer((T.int64(5),), scope="shared")'
    assert [op.name for op in analyze(fixture_func(name)).ops] == ["reshape"]

    def edit(text):
        assert text.count(old) == 1
        return text.replace(old, old.replace("T.int64(5)", "T.int64(4)"))
    func = fixture_func(name, edit)
    assert reads_past_copies(func) and analyze(func).ops == ()


def test_write_at_tiles_past_both_ends_are_not_reads_past_a_copy():
    # TVM 0.27's write_at (fixture s44_*write_at*, a generated case) copies a local buffer of 4
    # (filled from one of 5) out in whole tiles of 6, past both ends at the same index: clipped
    # to the output's 4 elements it reads inside the local buffer
    func = fixture_func("s44_hamming_window_write_at")
    assert not reads_past_copies(func)
    assert [op.name for op in analyze(func).ops] == ["hamming_window"]
