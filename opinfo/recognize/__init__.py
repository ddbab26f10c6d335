"""Op recognizers, one module per family. Each exposes ``match(expr, ctx)`` returning a
:class:`opinfo.recognize.common.Match` or None; :mod:`opinfo.decompose` tries them."""
