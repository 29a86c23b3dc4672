"""What every test shares: the `loadaware` logger, and the garbage collector's frozen
generation, as the test found them."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def restore_loadaware_logger() -> Iterator[None]:
    # `cli.main` points the logger at the sys.stderr it sees: under capture, a stream that is
    # closed when the test ends, which a later test's server threads would still write to.
    logger = logging.getLogger("loadaware")
    handlers, level = logger.handlers[:], logger.level
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


@pytest.fixture(autouse=True)
def restore_frozen_generation() -> Iterator[None]:
    # `loadaware plan` freezes what it loaded (a process that plans once exits soon
    # after); in a test process the objects would stay frozen for every later test.
    frozen = gc.get_freeze_count()
    yield
    if frozen == 0 and gc.get_freeze_count():
        gc.unfreeze()
