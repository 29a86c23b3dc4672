"""A GPU node hot by GPU use alone, relieved by a live round on the simulated API
with a real Prometheus scraping the simulator's DCGM exporter series, and a
stale GPU series refusing the round.

The "gpu" scenario: one GPU node holds all 4 GPUs at about 90 % (hot by gpu,
calm on cpu and memory), another holds 1 GPU at 10 %. The policy is
policy/gpu.yaml, pointed at that Prometheus with a short rate window.

Asserted: the round classifies the busy GPU node hot, and only by gpu; it
evicts GPU pods off it through the Eviction API (the evictor's Events, the pods
gone) and their replacements become Ready on the GPU node with free GPUs,
holding a GPU there; the relief proof judges the hot node on gpu with a
Prometheus sample covering only time after the evicted pods stopped, verdict
relieved (or improved), observed gpu close to what was expected, and the landing
node within its targets. With one GPU node's DCGM exporter stopped, the round is
refused (stale-metrics, exit 3) naming that node and the gpu resource, and
nothing is evicted.
"""

from __future__ import annotations

import datetime
import pathlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
import yaml

from loadaware import evict, policy, report, sim
from loadaware import round as rounds
from tests.lib.live import ScrapedSimulation, prometheus_context, scraped_simulation
from tests.lib.wait import poll

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
RATE_WINDOW_SECONDS = 5
GPUS = 4  # per GPU node of the scenario
T = TypeVar("T")


def _gpu_policy(url: str) -> policy.LoadAwarePolicy:
    """policy/gpu.yaml against this Prometheus: its GPU queries as they are (the
    simulator labels DCGM series as dcgm-exporter does), short windows."""
    document = yaml.safe_load((ROOT / "policy" / "gpu.yaml").read_text())
    source = document["metrics"]["prometheus"]
    source.pop("tokenFile", None)
    source.pop("caFile", None)
    source |= {"url": url, "rateWindow": f"{RATE_WINDOW_SECONDS}s", "scrapeInterval": "1s"}
    assert source["resources"]["gpu"]["nodeLabel"] == "Hostname"
    assert source["resources"]["gpu"]["capacity"] == "nvidia.com/gpu"
    document["metrics"] |= {"maxSampleAge": "1m", "hotspotConfirmation": {"consecutive": 1}}
    document["evictor"] = {"gracePeriodSeconds": 1}
    # The proof stops waiting once it has evidence; room for a loaded test machine.
    document["verify"] = {"reliefTimeout": "30s"}
    document["state"] = {"namespace": "default"}
    return policy.parse_policy(document)


@dataclass
class Live:
    scraped: ScrapedSimulation
    settings: policy.LoadAwarePolicy
    context: rounds.RoundContext

    @property
    def server(self) -> sim.SimServer:
        return self.scraped.server

    def query(self, promql: str) -> list[dict[str, Any]]:
        return self.scraped.query(promql)

    def gpu_nodes(self) -> dict[str, float]:
        """GPU node -> GPUs' worth busy, as the simulator exposes it now."""
        busy: dict[str, float] = {}
        for node in self.server.list("nodes"):
            if node["metadata"]["labels"].get("nvidia.com/gpu.present") == "true":
                busy[node["metadata"]["name"]] = 0.0
        for node, held in self.server.sim.usage.gpu_holders().items():
            for key, _ in held.values():
                busy[node] += self.server.sim.usage.gpu_percent[key] / 100
        return busy


@contextmanager
def _live(tmp_path: pathlib.Path) -> Iterator[Live]:
    with scraped_simulation(tmp_path, "gpu") as scraped:
        settings = _gpu_policy(scraped.prometheus.url)
        context = prometheus_context(
            scraped.server,
            tmp_path,
            settings,
            scraped.query,
            rate_window_seconds=RATE_WINDOW_SECONDS,
        )
        yield Live(scraped=scraped, settings=settings, context=context)


def _key(obj: dict[str, Any]) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


def _events(server: sim.SimServer, reason: str) -> list[dict[str, Any]]:
    return [e for e in server.list("events") if e.get("reason") == reason]


def test_a_gpu_hot_node_is_relieved_and_proven_through_prometheus(
    tmp_path: pathlib.Path,
) -> None:
    with _live(tmp_path) as live:
        server = live.server
        busy = live.gpu_nodes()
        hot = max(busy, key=busy.__getitem__)
        idle = min(busy, key=busy.__getitem__)
        assert busy[hot] / GPUS > 0.85
        assert busy[idle] / GPUS < 0.05
        before = {_key(p): p for p in server.list("pods")}

        record = rounds.run_round(live.settings, live.context).record
        audit = report.round_to_json(record)
        assert audit["status"] == "executed", audit["reason"]
        assert audit["exitCode"] == 0

        # (a) Hot by gpu alone: over the gpu target, under the cpu and memory ones.
        nodes = {n["name"]: n for n in audit["plan"]["nodes"]}
        assert {name for name, n in nodes.items() if n["class"] == "hot"} == {hot}
        judged = nodes[hot]
        assert judged["pool"] == "gpu"
        assert judged["before"]["gpu"] == pytest.approx(busy[hot] / GPUS, abs=1e-3)
        over = {r for r, limit in judged["targetThresholds"].items() if judged["before"][r] > limit}
        assert over == {"gpu"}

        # (b) GPU pods evicted through the Eviction API, replacements on the idle GPU node.
        evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
        assert evicted
        assert all(e["node"] == hot for e in evicted)
        assert all(e["expectedNode"] == idle for e in evicted)
        names = {e["pod"] for e in evicted}
        assert all(e["pod"].startswith("ml/") for e in evicted)
        noted = {
            f"{e['involvedObject']['namespace']}/{e['involvedObject']['name']}"
            for e in _events(server, "LoadawareEvicted")
        }
        assert noted == names
        for key in names:
            namespace, _, name = key.partition("/")
            assert server.find("pods", namespace, name) is None, key
            [container] = before[key]["spec"]["containers"]
            assert container["resources"]["requests"]["nvidia.com/gpu"] == "1"
        replacements = audit["verification"]["replacements"]
        assert {r["pod"] for r in replacements} == names
        for r in replacements:
            assert r["ready"], r
            assert r["node"] == idle, r
        holders = {key for key, _ in server.sim.usage.gpu_holders()[idle].values()}
        assert {f"ml/{r['replacement']}" for r in replacements} <= holders

        # (c) The proof: a gpu sample after the moves, relieved, as expected.
        verification = audit["verification"]
        assert verification["verdict"] == "relieved", verification
        [row] = verification["relief"]
        assert row["node"] == hot
        assert row["verdict"] in ("relieved", "improved"), row
        assert row["observed"]["gpu"] <= row["targets"]["gpu"]
        assert row["observed"]["gpu"] < row["before"]["gpu"] - 0.2
        assert row["observed"]["gpu"] == pytest.approx(row["expected"]["gpu"], abs=0.02)
        # What Prometheus holds now for the node agrees with the sample judged.
        [now] = live.query(f'sum by (Hostname) (DCGM_FI_DEV_GPU_UTIL{{Hostname="{hot}"}}) / 100')
        assert float(now["value"][1]) / GPUS == pytest.approx(row["observed"]["gpu"], abs=0.02)
        [landing] = verification["landingNodes"]
        assert landing["node"] == idle
        assert landing["verdict"] == "within targets", landing
        assert landing["observed"]["gpu"] == pytest.approx(landing["expected"]["gpu"], abs=0.02)
        # The GPU use left with the pods and arrived with their replacements (same capacity).
        gained = landing["observed"]["gpu"] - landing["before"]["gpu"]
        assert gained == pytest.approx(row["before"]["gpu"] - row["observed"]["gpu"], abs=0.02)
        window = datetime.timedelta(seconds=RATE_WINDOW_SECONDS)
        moved_at = max(evict.parse_rfc3339(e["at"]) for e in evicted)
        for judged_row in [row, landing]:
            changed = evict.parse_rfc3339(judged_row["changedBy"])
            sample = evict.parse_rfc3339(judged_row["sampleTime"])
            assert changed is not None
            assert sample is not None
            assert changed >= moved_at, judged_row
            assert sample - window > changed, judged_row


def test_a_stale_gpu_series_refuses_the_round(tmp_path: pathlib.Path) -> None:
    with _live(tmp_path) as live:
        server = live.server
        busy = live.gpu_nodes()
        # Not the hot node: any GPU node without a current GPU value refuses the round.
        quiet = min(busy, key=busy.__getitem__)
        assert live.query(f'DCGM_FI_DEV_GPU_UTIL{{Hostname="{quiet}"}}')
        before = {p["metadata"]["uid"] for p in server.list("pods")}

        server.set_gpu_exporter(quiet, False)
        # Gone at the next scrape: Prometheus marks the vanished series stale.
        poll(
            lambda: not live.query(f'DCGM_FI_DEV_GPU_UTIL{{Hostname="{quiet}"}}'),
            f"the GPU series of {quiet} to go stale",
            30,
        )
        # The node's cpu and memory series are still there: only its GPUs are unknown.
        assert live.query(f'node_memory_MemAvailable_bytes{{instance="{quiet}"}}')

        record = rounds.run_round(live.settings, live.context).record
        audit = report.round_to_json(record)
        assert audit["status"] == "refused", audit["reason"]
        assert audit["exitCode"] == 3  # refused to act (DESIGN.md's exit codes)
        assert audit["reason"].startswith(f"stale-metrics: node {quiet} no gpu value"), audit[
            "reason"
        ]
        assert "metrics.prometheus.resources.gpu" in audit["reason"]
        assert audit["evictions"] == []
        assert _events(server, "LoadawareEvicted") == []
        pods = server.list("pods")
        assert {p["metadata"]["uid"] for p in pods} == before
        assert not any(p["metadata"].get("deletionTimestamp") for p in pods)
