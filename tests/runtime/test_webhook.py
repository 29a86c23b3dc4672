"""The Alertmanager webhook over real HTTP on 127.0.0.1.

Covered: 401 (no, wrong, malformed credential; bearer and basic; token file
re-read; Secret-held token), 415 (non-JSON), 413 (2 MB body), 411, 400 (not
JSON, wrong version, missing fields), 202 and the round started in the
background with the alert's node as source (node, instance without port),
ignored (resolved, no opt-in label), coalesced (100 identical notifications,
concurrently: one round; a round already running), the cooldown expiring on
the injected clock, 503 on a non-leader, the counters on /metrics, and that
neither the token nor the Authorization header reaches the log.
"""

from __future__ import annotations

import base64
import concurrent.futures
import json
import logging
import pathlib

import pytest
from prometheus_client import REGISTRY

from loadaware import policy
from tests.runtime.conftest import (
    TOKEN,
    ServiceFactory,
    alert,
    make_settings,
    notification,
)


def counted(result: str) -> float:
    value = REGISTRY.get_sample_value("loadaware_webhook_notifications_total", {"result": result})
    return value or 0.0


def wait_rounds(run, count: int) -> None:  # type: ignore[no-untyped-def]
    assert run.service.wait_idle(10)
    assert len(run.rounds.calls) == count


def test_accepted_notification_starts_a_round_scoped_to_its_node(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    before = counted("accepted")
    status, body = run.post(notification(alert(node="node-7")))
    assert (status, body["result"]) == (202, "accepted")
    wait_rounds(run, 1)
    options = run.rounds.calls[0]
    assert options.trigger == "alertmanager"
    assert options.source_nodes == frozenset({"node-7"})
    assert counted("accepted") == before + 1


def test_instance_label_names_the_node_without_its_port(running_service: ServiceFactory) -> None:
    run = running_service()
    body = notification(
        alert(node=None, instance="node-b:9100", fingerprint="f1"),
        alert(node=None, instance="[fd00::7]:9100", fingerprint="f2"),
    )
    assert run.post(body)[0] == 202
    wait_rounds(run, 1)
    assert run.rounds.calls[0].source_nodes == frozenset({"node-b", "fd00::7"})


def test_alert_without_node_label_makes_the_round_cluster_wide(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    assert run.post(notification(alert(node=None)))[0] == 202
    wait_rounds(run, 1)
    assert run.rounds.calls[0].source_nodes is None


def test_response_is_immediate_while_the_round_runs(running_service: ServiceFactory) -> None:
    run = running_service()
    run.rounds.hold()
    status, _ = run.post(notification())
    assert status == 202  # answered although the round has not finished
    assert run.rounds.started.wait(10)
    assert run.service.is_running()
    run.rounds.release.set()
    wait_rounds(run, 1)


@pytest.mark.parametrize(
    ("headers", "token"),
    [
        pytest.param({}, None, id="no-credential"),
        pytest.param({}, "wrong-token", id="wrong-token"),
        pytest.param({}, TOKEN + "x", id="token-with-suffix"),
        pytest.param({"Authorization": f"Basic {TOKEN}"}, None, id="wrong-scheme"),
        pytest.param({"Authorization": "Bearer"}, None, id="empty-bearer"),
    ],
)
def test_wrong_credential_is_401_and_starts_nothing(
    running_service: ServiceFactory, headers: dict[str, str], token: str | None
) -> None:
    run = running_service()
    before = counted("unauthorized")
    status, body = run.post(notification(), token=token, headers=headers)
    assert (status, body["result"]) == (401, "unauthorized")
    assert counted("unauthorized") == before + 1
    assert run.service.rounds_started == 0


def test_token_file_is_read_again_for_each_request(
    running_service: ServiceFactory, tmp_path: pathlib.Path
) -> None:
    run = running_service()
    (tmp_path / "token").write_text("rotated-token\n")
    assert run.post(notification(), token=TOKEN)[0] == 401
    assert run.post(notification(), token="rotated-token")[0] == 202


def test_missing_token_file_is_our_fault_500(
    running_service: ServiceFactory, tmp_path: pathlib.Path
) -> None:
    run = running_service()
    (tmp_path / "token").unlink()
    # 5xx: Alertmanager retries, which is right for a problem on our side.
    assert run.post(notification())[0] == 500
    assert run.service.rounds_started == 0


def test_token_from_a_kubernetes_secret(
    running_service: ServiceFactory, tmp_path: pathlib.Path
) -> None:
    settings = policy.parse_policy(
        {
            "serve": {
                "webhook": {
                    "authToken": {
                        "secretReference": {"namespace": "loadaware", "name": "hook", "key": "t"}
                    }
                }
            }
        }
    )
    run = running_service(settings, secrets={("loadaware", "hook", "t"): "from-secret"})
    assert run.post(notification(), token=TOKEN)[0] == 401
    assert run.post(notification(), token="from-secret")[0] == 202


def test_basic_auth(running_service: ServiceFactory, tmp_path: pathlib.Path) -> None:
    (tmp_path / "password").write_text("pa:ss\n")
    settings = policy.parse_policy(
        {
            "serve": {
                "webhook": {
                    "basicAuth": {
                        "username": "alertmanager",
                        "passwordFile": str(tmp_path / "password"),
                    }
                }
            }
        }
    )
    run = running_service(settings)

    def basic(user: str, password: str) -> dict[str, str]:
        value = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {value}"}

    assert run.post(notification(), token=None, headers=basic("alertmanager", "wrong"))[0] == 401
    assert run.post(notification(), token=None, headers=basic("other", "pa:ss"))[0] == 401
    assert run.post(notification(), token=None, headers={"Authorization": "Basic !!"})[0] == 401
    assert run.post(notification(), token=TOKEN)[0] == 401
    assert run.post(notification(), token=None, headers=basic("alertmanager", "pa:ss"))[0] == 202


def test_no_credential_configured_refuses_everyone(running_service: ServiceFactory) -> None:
    run = running_service(policy.parse_policy({}))
    assert run.post(notification(), token=None)[0] == 401
    assert run.post(notification(), token="anything")[0] == 401


def test_non_json_content_type_is_415(running_service: ServiceFactory) -> None:
    run = running_service()
    before = counted("rejected")
    status, _ = run.post(notification(), headers={"Content-Type": "text/plain"})
    assert status == 415
    assert counted("rejected") == before + 1
    # Parameters on the media type are fine.
    headers = {"Content-Type": "application/json; charset=utf-8"}
    assert run.post(notification(), headers=headers)[0] == 202


def test_two_megabyte_body_is_413(running_service: ServiceFactory) -> None:
    run = running_service()
    big = notification(alert(summary="x" * (2 * 1024 * 1024)))
    status, body = run.post(big)
    assert (status, body["result"]) == (413, "rejected")
    assert run.service.rounds_started == 0
    # The connection handling survived: the next request is served.
    assert run.post(notification())[0] == 202


def test_body_limit_follows_the_policy(
    running_service: ServiceFactory, tmp_path: pathlib.Path
) -> None:
    run = running_service(make_settings(tmp_path, webhook={"maxBodyBytes": 2048}))
    assert run.post(notification(alert(summary="x" * 3000)))[0] == 413
    assert run.post(notification())[0] == 202


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b"[]", id="json-array"),
        pytest.param(json.dumps(notification(version="3")).encode(), id="version-3"),
        pytest.param(
            json.dumps({k: v for k, v in notification().items() if k != "alerts"}).encode(),
            id="no-alerts",
        ),
        pytest.param(
            json.dumps({k: v for k, v in notification().items() if k != "groupKey"}).encode(),
            id="no-group-key",
        ),
        pytest.param(
            json.dumps(notification({**alert(), "status": "pending"})).encode(),
            id="unknown-alert-status",
        ),
        pytest.param(
            json.dumps(notification({**alert(), "labels": {"node": 7}})).encode(),
            id="label-not-a-string",
        ),
    ],
)
def test_bad_payload_is_400(running_service: ServiceFactory, body: bytes) -> None:
    run = running_service()
    status, reply = run.post(body)
    assert (status, reply["result"]) == (400, "rejected")
    assert run.service.rounds_started == 0


def test_unknown_fields_are_ignored(running_service: ServiceFactory) -> None:
    run = running_service()
    body = notification(
        {**alert(), "silenceURL": "http://grafana/silence", "valueString": "cpu=0.95"},
        orgId=1,
        title="[FIRING:1] NodeHotspot",
    )
    assert run.post(body)[0] == 202


def test_resolved_notification_never_triggers(running_service: ServiceFactory) -> None:
    run = running_service()
    before = counted("ignored")
    status, body = run.post(notification(alert(status="resolved")))
    assert (status, body["result"]) == (200, "ignored")
    assert counted("ignored") == before + 1
    assert run.service.rounds_started == 0


def test_firing_alert_without_the_opt_in_label_is_ignored(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    assert run.post(notification(alert(action=None)))[1]["result"] == "ignored"
    assert run.post(notification(alert(action="page")))[1]["result"] == "ignored"
    # A resolved opt-in alert next to a firing one without the label: still nothing.
    mixed = notification(
        alert(status="resolved", fingerprint="a"), alert(action=None, fingerprint="b")
    )
    assert run.post(mixed)[1]["result"] == "ignored"
    assert run.service.rounds_started == 0


def test_only_opted_in_firing_alerts_name_the_sources(running_service: ServiceFactory) -> None:
    run = running_service()
    body = notification(
        alert(node="node-hot", fingerprint="a"),
        alert(node="node-other", action=None, fingerprint="b"),
        alert(node="node-cooled", status="resolved", fingerprint="c"),
    )
    assert run.post(body)[0] == 202
    wait_rounds(run, 1)
    assert run.rounds.calls[0].source_nodes == frozenset({"node-hot"})


def test_custom_action_label(running_service: ServiceFactory, tmp_path: pathlib.Path) -> None:
    settings = make_settings(tmp_path, webhook={"actionLabel": {"team": "platform"}})
    run = running_service(settings)
    assert run.post(notification(alert()))[1]["result"] == "ignored"
    assert run.post(notification(alert(team="platform")))[0] == 202


def test_flood_of_identical_notifications_starts_one_round(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    before = {r: counted(r) for r in ("accepted", "coalesced")}
    body = json.dumps(notification()).encode()
    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        replies = list(pool.map(lambda _: run.post(body), range(100)))
    statuses = sorted(status for status, _ in replies)
    assert statuses.count(202) == 1
    assert statuses.count(200) == 99
    wait_rounds(run, 1)
    assert counted("accepted") == before["accepted"] + 1
    assert counted("coalesced") == before["coalesced"] + 99
    # Still within the cooldown after the round ended: coalesced again.
    assert run.post(body)[1]["result"] == "coalesced"
    wait_rounds(run, 1)


def test_repeat_after_the_cooldown_starts_another_round(running_service: ServiceFactory) -> None:
    run = running_service()
    assert run.post(notification())[0] == 202
    wait_rounds(run, 1)
    run.clock.advance(4 * 60)
    assert run.post(notification())[1]["result"] == "coalesced"
    run.clock.advance(61)
    assert run.post(notification())[0] == 202
    wait_rounds(run, 2)


def test_other_alerts_of_the_group_are_not_coalesced(running_service: ServiceFactory) -> None:
    run = running_service()
    assert run.post(notification(alert(node="node-a")))[0] == 202
    wait_rounds(run, 1)
    assert run.post(notification(alert(node="node-b")))[0] == 202
    wait_rounds(run, 2)


def test_notification_during_a_round_is_coalesced_and_may_come_back(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    run.rounds.hold()
    assert run.post(notification(alert(node="node-a")))[0] == 202
    assert run.rounds.started.wait(10)
    status, body = run.post(notification(alert(node="node-b")))
    assert (status, body["result"]) == (200, "coalesced")
    run.rounds.release.set()
    wait_rounds(run, 1)
    assert run.rounds.max_active == 1
    # It started nothing, so it is not in the cooldown: Alertmanager's repeat counts.
    assert run.post(notification(alert(node="node-b")))[0] == 202
    wait_rounds(run, 2)


def test_non_leader_answers_503(running_service: ServiceFactory) -> None:
    run = running_service(leading=False)
    status, body = run.post(notification())
    assert (status, body["result"]) == (503, "rejected")
    assert run.service.rounds_started == 0
    # The credential is still checked first.
    assert run.post(notification(), token="wrong")[0] == 401
    run.leader.leading = True
    assert run.post(notification())[0] == 202


def test_unknown_path_and_method(running_service: ServiceFactory) -> None:
    run = running_service()
    assert run.post(notification(), path="/other")[0] == 404
    assert run.get("/alertmanager")[0] == 405


def test_secrets_never_reach_the_log(
    running_service: ServiceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="loadaware")
    run = running_service()
    run.post(notification())
    run.post(notification(), token="wrong-guess")
    wait_rounds(run, 1)
    text = "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
    assert TOKEN not in text
    assert "wrong-guess" not in text
    assert "Bearer" not in text


def test_a_group_whose_alerts_resolve_one_by_one_starts_no_new_round(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    both = notification(alert(node="node-a"), alert(node="node-b"))
    assert run.post(both)[0] == 202
    wait_rounds(run, 1)
    # node-b cooled first: the group now carries node-a alone, already covered.
    fewer = notification(alert(node="node-a"), alert("resolved", node="node-b"))
    assert run.post(fewer)[1]["result"] == "coalesced"
    # A node the round did not cover is news, in the same group.
    more = notification(alert(node="node-a"), alert(node="node-c"))
    assert run.post(more)[0] == 202
    wait_rounds(run, 2)
