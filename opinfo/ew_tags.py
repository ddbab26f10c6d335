"""An elementwise op of a fused kernel checked against the compute tags of its own blocks.

Several elementwise readings of one tree compute the same values: TVM writes
``greater(a, b)`` as ``b < a``, the very expression of ``less(b, a)``; ``negative(x)`` is
``x * -1``, as is ``multiply(x, R.const(-1))``; ``relu(x)`` is ``max(x, 0)``, as is
``maximum(x, R.const(0))``. Inside a fused kernel every op keeps its blocks and the names
TVM gave their computes (``T_greater``, ``T_multiply``; ``compute`` for the unary ops), so
the tags of an op's blocks must be among the tags of its TVM form (as :mod:`tir.topi`
lowers it). When they are not, the reading with the operands swapped (a comparison's
mirror) or with the constant as an operand (:func:`.ew_tree._with_scalar`) is tried; when no
reading fits, the cut is not taken.

Only tags naming a compute of their own (``T_<op>``) are evidence: ``compute`` is the tag of
every unary op and of TVM's cast blocks around an op without a float16 form.
"""
from __future__ import annotations

import functools
import re

from .tags import tag

MIRROR = {"less": "greater", "greater": "less", "less_equal": "greater_equal", "greater_equal": "less_equal"}


IDENTITY_TAGS = {"T_add": "add", "T_subtract": "subtract", "T_multiply": "multiply", "T_divide": "divide"}
"""The ops whose block is a plain copy of the tensor when TVM folds their constant (``x + 0``,
``x - 0``, ``x * 1``, ``x / 1``), by compute tag."""

IDENTITY_CONSTANTS = {"add": 0.0, "subtract": 0.0, "multiply": 1.0, "divide": 1.0}
"""The right operand each of those ops had for its block to be a copy."""


REINDEX = re.compile(r"_reindex(_\d+)?$")
"""The name ``reindex`` gives its copy block (``T_multiply_reindex``): a copy that may
transpose and is no op, whatever the tag it carries."""


def folded_name(block_name: str) -> "str | None":
    """The arithmetic op whose compute tag a copy block carries (``T_divide``: TVM folded
    ``x / 1``), or None -- also for ``reindex``'s copy of such a block, whose tag is the
    op's but which copies what the op computed (or, edited, anything else)."""
    if REINDEX.search(block_name):
        return None
    return IDENTITY_TAGS.get(bare(tag(block_name)))


def bare(t: str) -> str:
    """A tag without the digits FuseTIR appends to a repeated block name (``T_where1``)."""
    return re.sub(r"\d+$", "", t)


@functools.lru_cache(maxsize=None)
def _form_tags(name: str, attrs_items: tuple, dtypes: tuple) -> "frozenset | None":
    import tir

    for types in (dtypes, ("float32",) * 2, ("bool", "float32", "float32")):
        try:
            func = tir.topi.lower(name, [((2, 3), d) for d in types], **dict(attrs_items))
        except Exception:  # no form over these operands: try the next arity
            continue
        return frozenset(bare(tag(b.name)) for b in func.blocks())
    return None


def form_tags(name: str, attrs: dict, dtypes) -> "frozenset | None":
    """The compute tags of ``name``'s TVM form, or None when it cannot be lowered."""
    try:
        items = tuple(sorted(attrs.items()))
        hash(items)
    except TypeError:
        return None
    return _form_tags(name, items, tuple(str(d) for d in dtypes))


def contradicts(name: str, attrs: dict, dtypes, block_tags) -> bool:
    """Whether some block's own compute tag (``T_<op>``) is not one of ``name``'s form."""
    # a tag naming the op itself stands, whatever the lowering library calls its block
    own = {bare(t) for t in block_tags if t.startswith("T_")} - {"T_" + name.rsplit(".", 1)[-1]}
    if not own:
        return False
    want = form_tags(name, attrs, dtypes)
    return want is not None and not own <= want


def alternatives(found, expr, leaves) -> list:
    """Other readings of the same values: a comparison's mirror with its operands swapped,
    add and subtract of a scalar constant as each other (the constant negated), and a
    binary op with a scalar constant for a one-leaf tree."""
    from . import ew_tree
    from .recognize.common import strip

    name, attrs, order, roles = found
    out = []
    if name in MIRROR:
        if len(order) == 2:
            out.append((MIRROR[name], attrs, tuple(reversed(order)), roles))
        elif len(roles) == 1 and roles[0] in ("lhs", "rhs"):
            out.append((MIRROR[name], attrs, order, ("rhs",) if roles[0] == "lhs" else ("lhs",)))
    if len(leaves) == 1 and name in ("add", "subtract") and roles in (("lhs",), ("rhs",)) and \
            not (name == "subtract" and roles == ("rhs",)):
        # x - c is add(x, -c), x + c (or c + x) subtract(x, -c): TVM folds add(x, R.const(-1))
        # (an ONNX Gather at index -1) to x - 1 in a T_add block
        out.append(("subtract" if name == "add" else "add", attrs, order, ("lhs",)))
    if len(leaves) == 1:
        root = strip(ew_tree._under_output_cast(expr, leaves))
        consts, _ = ew_tree._consts(expr, leaves)
        got = ew_tree._with_scalar(root, leaves[0], consts, not leaves[0].dtype.is_float)
        if got is not None and got[0] != name:
            out.append(got)
    return out
