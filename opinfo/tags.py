"""Compute tags: the block names TVM's compute definitions give (``T_squeeze``,
``adaptive_pool_sum``, ``T_einsum``), read back through the renaming done by printing
(``_1`` for a repeated name) and by schedule primitives: ``decompose_reduction`` names its
blocks ``<tag>_init`` and ``<tag>_update``, ``rfactor`` ``<tag>_rf``, ``blockize``
``<tag>_o``, ``reindex`` its copy ``<tag>_reindex`` (read from the function as given by
:func:`.api._settle_copy`). Cache copies (``<buffer>_local``) are removed by
:func:`.normalize.normalize` before tags are read."""
from __future__ import annotations

import re

_SUFFIX = re.compile(r"(_\d+|_init|_update|_rf|_o|_reindex)$")


def tag(block_name: str) -> str:
    """The compute tag a block name was made from."""
    prev = None
    while prev != block_name:
        prev, block_name = block_name, _SUFFIX.sub("", block_name)
    return block_name


def tags(func) -> list:
    """The compute tags of ``func``'s blocks, in program order. ``loop_partition`` names each
    copy of a block ``<name>_<its copy of the loop>`` (``T_einsum_ax00`` under loop ``ax00``):
    read without that suffix."""
    from tir.stmt import Block, For

    names = {}

    def walk(node, loops):
        if isinstance(node, Block):
            for v in loops:
                if node.name.endswith("_" + v) and len(node.name) > len(v) + 1:
                    names[id(node)] = node.name[:-len(v) - 1]
                    break
        if isinstance(node, For):
            loops = loops + (node.loop_var.name,)
        for child in _children(node):
            walk(child, loops)

    walk(func.body, ())
    return [tag(names.get(id(b), b.name)) for b in func.blocks()]


def _children(node):
    """The statements directly below ``node`` (no block or loop lives inside an expression
    or a buffer)."""
    from tir.functor import children
    from tir.stmt import Stmt

    return [c for c in children(node) if isinstance(c, Stmt)]


def compute_tags(func) -> list:
    """:func:`tags` without ``root``, the block the body is wrapped in (no compute's)."""
    return [t for t in tags(func) if t != "root"]


def under_tag(func, name: str):
    """``func`` normalized (:func:`.normalize.normalize`) when, its cache copies dropped
    (their blocks are named after buffers, ``<buffer>_shared``), every block carries the
    compute tag ``name``; else None."""
    from .normalize import normalize  # late: recognizers that normalize imports read tags

    if name not in tags(func):
        return None
    norm = normalize(func)
    return norm if norm is not None and set(compute_tags(norm)) == {name} else None


SCOPE_SUFFIXES = ("_shared", "_local", "_global", "_warp", "_dyn")
"""What ``cache_read``/``cache_write`` and ``set_scope`` append to a cached buffer's name."""


def cache_names(name: str) -> list:
    """``name`` and what is left of it as scope suffixes come off, last first."""
    names = [name]
    while True:
        suffix = next((s for s in SCOPE_SUFFIXES if name.endswith(s) and len(name) > len(s)), None)
        if suffix is None:
            return names
        name = name[:-len(suffix)]
        names.append(name)
