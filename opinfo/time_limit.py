"""A limit on the processor time the analysis of one PrimFunc may take.

Most functions are read in well under a second, but a recognizer that runs a function (the
interpreter walks a data-dependent scatter loop element by element) can take much longer on
large shapes. :func:`limited` bounds that: past ``seconds`` of processor time the work is interrupted by
:class:`TimeLimitExceeded` and the caller abstains for that function, so one pathological
kernel cannot stall the analysis of a whole model or corpus.

Processor time (user and system, ``ITIMER_PROF``), not wall-clock time: a loaded machine
running other work beside the analysis slows it down but does not change what it decides.
The timer signals ``SIGPROF`` and so applies only in the main thread of a POSIX process --
where the CLI and its worker processes run; elsewhere it is not armed.
Limits do not nest: an inner :func:`limited` under an armed one runs under the outer limit.
Past the limit the timer fires again every tenth of it until the work stops, since Python
swallows an exception raised inside a garbage-collector callback or a ``__del__``.
"""
from __future__ import annotations

import contextlib
import signal
import threading


class TimeLimitExceeded(BaseException):
    """Raised inside the limited work when its time is up. A BaseException, like
    KeyboardInterrupt, so that the ``except`` clauses by which recognizers reject a form they
    were not written for do not swallow it."""


_ARMED = False


def _available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _expired(signum, frame):
    if _ARMED:
        raise TimeLimitExceeded()


@contextlib.contextmanager
def limited(seconds: "float | None"):
    """Run the body with at most ``seconds`` of processor time (None or <= 0: no limit)."""
    global _ARMED
    if not seconds or seconds <= 0 or _ARMED or not _available():
        yield
        return
    previous = signal.signal(signal.SIGPROF, _expired)
    _ARMED = True
    try:
        # fired again every tenth of the limit after it: an exception raised where Python
        # swallows it (a garbage-collector callback, a __del__) does not lose the limit
        signal.setitimer(signal.ITIMER_PROF, float(seconds), max(float(seconds) / 10, 0.01))
        yield
    finally:
        while True:  # disarm even when a last signal lands here
            try:
                signal.setitimer(signal.ITIMER_PROF, 0)
                break
            except TimeLimitExceeded:
                continue
        _ARMED = False
        signal.signal(signal.SIGPROF, previous)
