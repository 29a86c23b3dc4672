"""A live round plans once: its landing control starts from what the planner built.

Covered, on the small scenario served by the simulated API: a round that evicts
classifies the cluster for its plan once and builds one Placement (the planner's,
which landing control takes over, the plan's moves undone), and still sends each
eviction with the landing set derived before it; a dry run keeps no landing
control and classifies once too.
"""

from __future__ import annotations

from collections import Counter

import pytest

from loadaware import report
from loadaware import round as rounds
from loadaware.plan import _build, _placement
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import sim_server


@pytest.fixture
def built(monkeypatch) -> Counter[str]:
    """How many times the round classified the cluster for a plan, and built a
    Placement (an occupancy of every pod): the real functions, counted."""
    calls: Counter[str] = Counter()
    classify = _build.classify_for_plan
    placement_init = _placement.Placement.__init__

    def counted_classify(*args, **kwargs):
        calls["classify_for_plan"] += 1
        return classify(*args, **kwargs)

    def counted_placement(self, *args, **kwargs):
        calls["Placement"] += 1
        placement_init(self, *args, **kwargs)

    monkeypatch.setattr(_build, "classify_for_plan", counted_classify)
    monkeypatch.setattr(_placement.Placement, "__init__", counted_placement)
    return calls


@pytest.mark.parametrize("dry_run", [False, True], ids=["evicting", "dry-run"])
def test_a_round_classifies_and_builds_its_occupancy_once(built, tmp_path, dry_run) -> None:
    settings = metrics_server_policy()
    with sim_server("small", ready_delay=5.0) as server:
        context = live_context(server, tmp_path, settings)
        record = rounds.run_round(settings, context, rounds.RoundOptions(dry_run=dry_run)).record
    audit = report.round_to_json(record)
    assert record.exit_code == 0, audit["reason"]
    sent = [e for e in audit["evictions"] if e["result"] == ("dry-run" if dry_run else "evicted")]
    assert sent
    assert all(e["landingSet"] for e in sent)
    assert built == Counter({"classify_for_plan": 1, "Placement": 1})
