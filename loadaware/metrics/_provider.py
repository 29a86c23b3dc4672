"""The interface every metrics source implements."""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import Protocol

from loadaware.metrics._types import Usage


class MetricsProvider(Protocol):
    """Reads usage for the given nodes and pods, once per round.

    Implementations query the whole cluster at once (never per node or pod) and
    keep no state between calls: credentials are read again for each call.
    They raise RefusedError when the source cannot be trusted at all
    (unreachable, refused, malformed or duplicated data). Nodes or pods the
    source has nothing for are simply absent from the Usage; judging freshness
    and plausibility is assess_usage's job, since that needs allocatable.
    """

    def fetch_usage(
        self,
        node_names: Collection[str],
        pod_keys: Collection[str],
        *,
        now: datetime.datetime,
    ) -> Usage:
        """Usage at `now` for these nodes and pods (keys "namespace/name")."""
        ...
