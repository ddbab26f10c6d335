"""Open frames while a function body is read: the function (root block) and blocks."""
from __future__ import annotations


class FuncFrame:
    """A ``@T.prim_func`` body: its attributes, matched buffers and root allocations."""

    WHERE = "a prim_func body"

    def __init__(self, params, buffer_map):
        self.params = params
        self.buffer_map = buffer_map
        self.attrs: dict = {}
        self.allocs: list = []
        self.predeclared: set = set()
        """ids of ``n = T.int64()`` statements already declared before the parameters."""
        self.node = None
        """The ``ast`` node whose suite is this frame's body (its header holds allocations)."""


class BlockFrame:
    """A ``with T.block(name):`` (or ``T.sblock``) being read."""

    WHERE = "a block"

    def __init__(self, name: str):
        self.name = name
        self.iter_vars: list = []
        self.bindings: list = []
        self.reads = None
        self.writes = None
        self.annotations: dict = {}
        self.allocs: list = []
        self.match_buffers: list = []
        self.init = None
        self.node = None
        """The ``with`` node whose suite is this block's body (its header holds allocations)."""
        self.predicate = None
