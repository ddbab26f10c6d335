"""Names of a package loaded on first use (PEP 562 module ``__getattr__``).

Keeps ``import tir`` (and ``opinfo``, ``layout``, ``byoc``) fast and free of side effects:
a submodule is imported only when one of its names is first asked for.
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import Callable


class _Package(types.ModuleType):
    """A package module whose lazy names equal to their submodule's name (``byoc.match``,
    ``layout.layout``) stay that submodule's attribute: importing a submodule binds it on
    its package (``import byoc.pipeline`` imports ``byoc.match``), which would otherwise
    replace the function by the module for every later reader. The flip side: ``import
    byoc.match as m`` binds the function too; reach such a module through ``sys.modules``
    or ``from byoc.match import ...``."""

    def __setattr__(self, name: str, value) -> None:
        if (name in self.__dict__.get("_lazy_same_named", ()) and isinstance(value, types.ModuleType)
                and hasattr(value, name)):
            value = getattr(value, name)
        super().__setattr__(name, value)


def lazy_getattr(package: str, table: "dict[str, str]") -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``table`` maps a public name to the
    submodule defining it. A name equal to its submodule's name is that submodule's
    attribute of the same name if it has one (``byoc.match``), else the submodule itself
    (``tir.topi``)."""

    module = sys.modules.get(package)
    if module is not None and type(module) is types.ModuleType:
        module.__class__ = _Package
        module._lazy_same_named = frozenset(n for n, sub in table.items() if n == sub)

    def __getattr__(name: str):
        sub = table.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(f".{sub}", package)
        if name == sub and not hasattr(module, name):
            return module
        return getattr(module, name)

    return __getattr__
