"""Shared pieces of the tir.topi hypothesis tests: settings, shape strategies, and
lower-then-interpret."""
import numpy as np
from hypothesis import settings, strategies as st

import tir
from tir import topi

SETTINGS = settings(max_examples=15, deadline=None)
dims = st.lists(st.integers(1, 4), min_size=1, max_size=4)
floats = st.floats(-2.0, 2.0, allow_nan=False, width=32)


def run(op, arrays, **attrs):
    func = topi.lower(op, [(a.shape, str(a.dtype)) for a in arrays], **attrs)
    return tir.run(func, *arrays)


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def close(actual, expected, tol=1e-5):
    assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


@st.composite
def axes_of(draw, rank, min_size=1, max_size=None):
    """A set of distinct axes of ``rank`` (non-empty by default), each possibly written negatively."""
    picked = draw(st.lists(st.integers(0, rank - 1), min_size=min_size, max_size=max_size or rank, unique=True))
    return [a - rank if draw(st.booleans()) else a for a in picked]
