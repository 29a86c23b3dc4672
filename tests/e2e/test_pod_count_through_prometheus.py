"""A node crowded by pod count, relieved by a live round on the simulated API with
a real Prometheus (scraping the simulated cluster) as the metrics source.

Asserted: the pool judging `pods` finds default-a-002 (23 of 110 pod slots) over
its 19% target, the round moves pods off it through Evictions, and the relief
check judges it on the count read back from the API, once a Prometheus sample
covering only the time after the moves is there (its time minus the rate
window is after the evicted pods stopped).
"""

from __future__ import annotations

import datetime
import pathlib

import pytest

from loadaware import evict, policy, report
from loadaware import round as rounds
from tests.lib.live import prometheus_context, scraped_simulation

pytestmark = pytest.mark.slow

RATE_WINDOW_SECONDS = 5


def test_pod_count_relieved_and_proven_through_prometheus(tmp_path: pathlib.Path) -> None:
    with scraped_simulation(tmp_path, "small") as scraped:
        server = scraped.server
        settings = policy.parse_policy(
            {
                "metrics": {
                    "maxSampleAge": "1m",
                    "prometheus": {
                        "url": scraped.prometheus.url,
                        "rateWindow": f"{RATE_WINDOW_SECONDS}s",
                        "scrapeInterval": "1s",
                    },
                    "hotspotConfirmation": {"consecutive": 1},
                },
                "nodePools": [
                    {"name": "default", "thresholds": {"pods": 5}, "targetThresholds": {"pods": 19}}
                ],
                "evictor": {"gracePeriodSeconds": 1},
                "state": {"namespace": "default"},
            }
        )
        context = prometheus_context(
            server,
            tmp_path,
            settings,
            scraped.query,
            rate_window_seconds=RATE_WINDOW_SECONDS,
        )
        record = rounds.run_round(settings, context).record
        audit = report.round_to_json(record)
        assert audit["status"] == "executed", audit["reason"]
        hot = {n["name"] for n in audit["plan"]["nodes"] if n["class"] == "hot"}
        assert hot == {"default-a-002"}
        verification = audit["verification"]
        assert verification["verdict"] == "relieved", verification
        [row] = verification["relief"]
        count = sum(1 for p in server.list("pods") if p["spec"].get("nodeName") == row["node"])
        assert row["observed"]["pods"] == pytest.approx(count / 110, abs=1e-4)
        assert row["observed"]["pods"] <= 0.19
        window = datetime.timedelta(seconds=RATE_WINDOW_SECONDS)
        for judged in verification["relief"] + verification["landingNodes"]:
            changed = evict.parse_rfc3339(judged["changedBy"])
            sample = evict.parse_rfc3339(judged["sampleTime"])
            assert changed is not None
            assert sample is not None
            assert sample - window > changed, judged
