"""A live round whose model of kube-scheduler disagrees with the cluster's.

The simulated scheduler scores MostAllocated (a KubeSchedulerConfiguration
profile, as `sim serve --scheduler-config` runs it) while loadaware is left on
kube-scheduler's default profile (LeastAllocated). Covers, on a generated
150-node cluster: the replacements land outside the landing sets the model
predicted, and the round stops with scheduler-model-disagrees after a few
evictions, partial and refused (exit 3), its taints all removed; no replacement
lands on a bad node without the breaker opening. The same round with the
configuration given to loadaware completes: test_scheduler_profile_on_sim.

The cluster's seed is one whose first replacements land on good nodes: where
MostAllocated puts one on a hot node first (it packs onto the fullest feasible
node, which usage may have made hot), the breaker opens before a third off-set
landing, as the breaker's own tests cover.
"""

from __future__ import annotations

import pathlib

import pytest

from loadaware import policy, report, scheduling, sim
from loadaware import round as rounds
from tests.evict.test_scheduler_profile_on_sim import MOST_ALLOCATED
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import NOW, sim_server


def _most_allocated_round(tmp_path: pathlib.Path) -> dict:
    generated = sim.generate_cluster(
        nodes=150, family="usage-independent", seed=4, hot_fraction=0.1, now=NOW
    )
    profiles = scheduling.profiles_from_config(
        policy.KubeSchedulerConfiguration.model_validate(MOST_ALLOCATED)
    )
    # The seed is chosen for the plan's own order of evictions (steering.lookahead 0).
    loaded = metrics_server_policy(
        metrics={"metricsServer": {}, "onStaleNode": "Exclude"}, steering={"lookahead": 0}
    )
    with sim_server(
        None,
        objects=generated.objects,
        metrics=generated.metrics,
        ready_delay=5.0,
        scheduler_profiles=profiles,
    ) as server:
        record = rounds.run_round(loaded, live_context(server, tmp_path, loaded)).record
    return report.round_to_json(record)


@pytest.mark.slow
def test_round_on_a_scheduler_the_model_disagrees_with_stops(tmp_path) -> None:
    audit = _most_allocated_round(tmp_path)
    verification = audit["verification"]
    assert audit["status"] == "partial", audit["reason"]
    assert audit["exitCode"] == 3
    assert verification["stopped"].startswith("scheduler-model-disagrees: ")
    assert "landed outside the landing set" in verification["stopped"]
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    planned = audit["plan"]["evictions"]
    # Caught within a few evictions, well before the plan was carried out.
    assert 3 <= len(evicted) <= 5 < len(planned)
    skipped = [e for e in audit["evictions"] if e["result"] == "skipped"]
    assert any(e["reason"].startswith("round stopped: scheduler-model-disagrees") for e in skipped)
    assert verification["taintsLeft"] == []
    assert set(verification["taintsRemoved"]) == set(verification["taintsApplied"])
    if verification["landings"]["bad"]:
        assert verification["breaker"] is not None
    assert verification["landings"]["off-set"] >= 3
