"""Python's cyclic garbage collector, held off while bulk data is read or built.

Reading a 150,000-pod cluster, a 150,000-series Prometheus answer or a metrics
file makes hundreds of thousands of containers that all stay alive, so the
collector runs full collections over them (and over everything else the
process holds) again and again: that can cost as much as the reading, and it
frees nothing, since none of it forms cycles.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_resume = False


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block. Blocks may overlap, in threads or nested:
    it is resumed when the last one ends, and only if it was on when the first began."""
    global _holders, _resume
    with _lock:
        if _holders == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _resume:
                gc.enable()


def age_built_objects() -> None:
    """Move every object the collector tracks to its oldest generation, without a
    collection (gc.freeze then gc.unfreeze: two list splices, however many objects).

    For the end of a paused load that built a large state: all of it is young, and
    the collector, once it runs again, would walk all of it at its next collection
    of each generation in turn (half a second each at 150,000 pods, for objects
    that form no cycles). Nothing changes where objects are frozen already, since
    unfreezing would release them.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
