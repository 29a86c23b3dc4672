"""What every test shares: the `loadaware` logger as the test found it."""

from __future__ import annotations

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
