"""Names of a package loaded on first use (PEP 562 module ``__getattr__``).

Keeps ``import tir`` (and ``opinfo``, ``layout``, ``byoc``) fast and free of side effects:
a submodule is imported only when one of its names is first asked for.
"""
from __future__ import annotations

import importlib
from typing import Callable


def lazy_getattr(package: str, table: "dict[str, str]") -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``table`` maps a public name to the
    submodule defining it. A name equal to its submodule's name is that submodule's
    attribute of the same name if it has one (``byoc.match``), else the submodule itself
    (``tir.topi``)."""

    def __getattr__(name: str):
        sub = table.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(f".{sub}", package)
        if name == sub and not hasattr(module, name):
            return module
        return getattr(module, name)

    return __getattr__
