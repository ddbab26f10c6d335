"""verify.differ: rounding of long single-precision sums is not a difference, wherever
cancellation brings an element near zero; a real difference still is, however large a
few other elements are."""
import numpy as np
import pytest

from opinfo.verify import differ


def _sums(order: int, seed: int = 0) -> np.ndarray:
    """Sums of 135 float32 products, one per output, added up in one of two orders."""
    rng = np.random.default_rng(seed)
    terms = (rng.standard_normal((4000, 135)) * 20).astype(np.float32)
    if order:
        terms = terms[:, ::-1]
    out = np.zeros(terms.shape[0], np.float32)
    for k in range(terms.shape[1]):
        out += terms[:, k]
    return out


def test_summation_order_is_no_difference():
    a, b = _sums(0), _sums(1)
    assert not np.array_equal(a, b)
    # the elements cancellation brought near zero keep the rounding of their large terms
    near_zero = np.abs(b) < 1.0
    assert near_zero.any()
    assert not np.allclose(a, b, rtol=1e-4, atol=1e-5)  # the old, magnitude-blind tolerance
    assert not differ(a, b)


@pytest.mark.parametrize("delta", [1e-2, 1.0])
def test_a_changed_element_is_a_difference(delta):
    a = _sums(0)
    b = a.copy()
    b[np.argmin(np.abs(a))] += delta  # where the tolerance is the absolute one alone
    assert differ(a, b)


def test_a_few_huge_elements_do_not_hide_a_difference():
    a = np.linspace(-3, 3, 1000).astype(np.float32)
    a[:5] = 1e30
    b = a.copy()
    b[500] += 1e-2
    assert differ(a, b)


def test_half_precision_and_integers_unchanged():
    a = np.linspace(-3, 3, 100).astype(np.float16)
    assert not differ(a, a + np.float16(1e-3))
    assert differ(a, a + np.float16(0.5))
    i = np.arange(10, dtype=np.int32)
    assert differ(i, i + 1)
    assert not differ(i, i.copy())
