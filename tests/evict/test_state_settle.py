"""The state ConfigMap's checks and settlements, on the simulated API through the
official client (no round: StateStore alone).

Covers check_access: the namespace missing (the one-line fix, or False for a
dry run, which then writes nothing), being deleted, and every 403 on the way
(list namespaces, get, and the dry-run create or update of the ConfigMap),
each a MissingPermissionError naming what to grant; a 409 on the dry run is
no error. Covers settle_pending on reservations written by hand: one younger
than settle_after is left alone; one whose pod is still there with its UID
and not terminating is released; gone, terminating or replaced under the same
name stays counted, settled as evicted; one without a UID is left alone; one
its own round settles while the pods are read keeps that round's outcome; and
a reservation is stamped when it is written, not when it was first tried. A
store's updates start from what it last wrote, with no read, until another writer
(a reservation, a suspension) sends it back to one.
"""

from __future__ import annotations

import datetime
import pathlib
from typing import Any

import pytest

from loadaware import errors, evict, kube, policy, sim
from tests.lib.live import metrics_server_policy
from tests.lib.sim import NOW, call, sim_server

STATE_CONFIG_MAPS = "/api/v1/namespaces/loadaware/configmaps"


@pytest.fixture
def server():
    with sim_server("small") as running:
        yield running


def _kube(server: sim.SimServer, tmp_path: pathlib.Path) -> evict.Kube:
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    return evict.Kube(kube.api_client(kube.ClientSettings(kubeconfig=str(kubeconfig))))


def _create_namespace(server: sim.SimServer, name: str = "loadaware") -> None:
    status, body = call(server, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201, body


def _fault(server: sim.SimServer, **rule: Any) -> None:
    status, body = call(server, "POST", "/_sim/faults", rule)
    assert status == 201, body


def _store(
    kube: evict.Kube, at: datetime.datetime, settings: policy.LoadAwarePolicy | None = None
) -> evict.StateStore:
    return evict.StateStore(kube, settings or metrics_server_policy(), lambda: at)


# -- check_access ---------------------------------------------------------------------


def test_a_missing_namespace_is_named_with_the_fix(server, tmp_path) -> None:
    store = _store(_kube(server, tmp_path), NOW)
    with pytest.raises(errors.MissingNamespaceError) as info:
        store.check_access(write=True)
    assert info.value.exit_code == 2
    assert info.value.reference == "missing-namespace"
    assert str(info.value) == (
        'namespace "loadaware" not found: '
        "create it (kubectl create namespace loadaware) or set state.namespace"
    )
    # A dry run reads the state as empty there and may go on.
    assert store.check_access(write=False) is False
    _create_namespace(server)
    assert store.check_access(write=True) is True
    # Checked with a dry run: nothing was written.
    assert server.list("configmaps", "loadaware") == []


class _TerminatingNamespace:
    """A namespace the namespace controller is emptying (kube-apiserver refuses new
    objects in it with a 403)."""

    def find_namespace(self, name: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "deletionTimestamp": "2026-11-29T07:59:00Z"}}


def test_a_namespace_being_deleted_is_no_place_for_state() -> None:
    store = _store(_TerminatingNamespace(), NOW)  # type: ignore[arg-type]
    with pytest.raises(errors.MissingNamespaceError, match="is being deleted: create it again"):
        store.check_access(write=True)
    assert store.check_access(write=False) is False


@pytest.mark.parametrize(
    ("fault", "grant"),
    [
        (
            {"path": "^/api/v1/namespaces$", "method": "GET"},
            "grant list on namespaces to the identity loadaware runs as "
            "(as deploy/base/clusterrole.yaml does)",
        ),
        (
            {"path": f"^{STATE_CONFIG_MAPS}/loadaware-state$", "method": "GET"},
            "grant get on configmaps/loadaware-state in namespace loadaware",
        ),
        (
            {"path": f"^{STATE_CONFIG_MAPS}$", "method": "POST"},
            "grant create on configmaps in namespace loadaware",
        ),
    ],
    ids=["list-namespaces", "get-configmap", "create-configmap"],
)
def test_each_forbidden_call_is_named_with_what_to_grant(
    server, tmp_path, fault: dict[str, Any], grant: str
) -> None:
    _create_namespace(server)
    store = _store(_kube(server, tmp_path), NOW)
    _fault(server, status=403, **fault)
    with pytest.raises(errors.MissingPermissionError) as info:
        store.check_access(write=True)
    message = str(info.value)
    assert info.value.exit_code == 2
    assert "\n" not in message
    assert ": 403 " in message
    assert grant in message


def test_the_update_is_checked_once_the_config_map_exists(server, tmp_path) -> None:
    _create_namespace(server)
    store = _store(_kube(server, tmp_path), NOW)
    store.set_suspended(False, by="test", reason="creates the ConfigMap")
    written = server.find("configmaps", "loadaware", "loadaware-state")
    _fault(server, path=f"^{STATE_CONFIG_MAPS}/loadaware-state$", method="PUT", status=403)
    with pytest.raises(errors.MissingPermissionError, match="grant update on configmaps/loadaware"):
        store.check_access(write=True)
    # A dry run needs no write.
    assert store.check_access(write=False) is True
    call(server, "DELETE", "/_sim/faults")
    # Someone wrote in between: a 409 comes after authorization, which passed.
    _fault(server, path=f"^{STATE_CONFIG_MAPS}/loadaware-state$", method="PUT", status=409)
    assert store.check_access(write=True) is True
    assert server.find("configmaps", "loadaware", "loadaware-state") == written


# -- settle_pending ---------------------------------------------------------------------


def _reservation(
    pod: dict[str, Any], *, round_id: str, uid: str | None = None
) -> evict.EvictionRecord:
    meta = pod["metadata"]
    return evict.EvictionRecord(
        at="1970-01-01T00:00:00Z",  # stamped by reserve()
        round=round_id,
        pod=f"{meta['namespace']}/{meta['name']}",
        uid=meta["uid"] if uid is None else uid,
        namespace=meta["namespace"],
        workload=f"test/{meta['namespace']}/{meta['name']}",
        node=pod["spec"].get("nodeName") or "",
    )


def _running_pods(server: sim.SimServer, count: int) -> list[dict[str, Any]]:
    pods = [
        p
        for p in server.list("pods")
        if (p.get("spec") or {}).get("nodeName")
        and not p["metadata"].get("deletionTimestamp")
        and any(r.get("kind") == "ReplicaSet" for r in p["metadata"].get("ownerReferences") or [])
    ]
    assert len(pods) >= count
    return pods[:count]


def _outcomes(store: evict.StateStore) -> dict[str, str]:
    return {r.round: r.outcome for r in store.records()}


def test_reservations_are_settled_by_what_became_of_their_pods(server, tmp_path) -> None:
    _create_namespace(server)
    kube = _kube(server, tmp_path)
    reserved_at = NOW - datetime.timedelta(minutes=10)
    earlier = _store(kube, reserved_at)
    running, gone, terminating, replaced, no_uid = _running_pods(server, 5)
    for round_id, pod, uid in (
        ("running", running, None),
        ("gone", gone, None),
        ("terminating", terminating, None),
        ("replaced", replaced, "a-uid-from-before"),
        ("no-uid", no_uid, ""),
    ):
        earlier.reserve(_reservation(pod, round_id=round_id, uid=uid))
    for pod, grace in ((gone, 0), (terminating, 30)):
        meta = pod["metadata"]
        status, body = call(
            server,
            "DELETE",
            f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
            {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace},
        )
        assert status == 200, body
    server.reconcile()
    assert server.find("pods", gone["metadata"]["namespace"], gone["metadata"]["name"]) is None

    later = _store(kube, NOW)
    assert reserved_at + later.settle_after < NOW  # old enough
    settled = {s.record.round: (s.outcome, s.why) for s in later.settle_pending()}
    assert settled == {
        "running": ("released", "pod still there, same UID, not terminating"),
        "gone": ("evicted", "pod gone"),
        "terminating": ("evicted", "pod terminating"),
        "replaced": ("evicted", "pod replaced (new UID)"),
    }
    assert _outcomes(later) == {
        "running": "released",
        "gone": "evicted",
        "terminating": "evicted",
        "replaced": "evicted",
        "no-uid": "reserved",  # nothing tells its pod from a namesake: still counted
    }
    # Settled once: nothing is left to settle.
    assert later.settle_pending() == ()
    # Only what still counts uses the budgets.
    window = metrics_server_policy(limits={"window": {"duration": "1h", "maxEvictions": 10}})
    assert _store(kube, NOW, window).carried_budget().window_total_left == 10 - 4


def test_a_young_reservation_is_left_alone(server, tmp_path) -> None:
    _create_namespace(server)
    kube = _kube(server, tmp_path)
    (pod,) = _running_pods(server, 1)
    store = _store(kube, NOW)
    store.reserve(_reservation(pod, round_id="in-flight"))
    just_too_young = _store(kube, NOW + store.settle_after)
    assert just_too_young.settle_pending() == ()
    assert _outcomes(just_too_young) == {"in-flight": "reserved"}
    old_enough = _store(kube, NOW + store.settle_after + datetime.timedelta(seconds=1))
    assert [s.outcome for s in old_enough.settle_pending()] == ["released"]


def test_a_reservation_is_stamped_when_written(server, tmp_path) -> None:
    _create_namespace(server)
    kube = _kube(server, tmp_path)
    (pod,) = _running_pods(server, 1)
    _store(kube, NOW).reserve(_reservation(pod, round_id="r"))
    (record,) = _store(kube, NOW).records()
    assert record.at == evict.rfc3339(NOW)


class _SettledMeanwhile(evict.Kube):
    """Its own round settles the reservation while the settler reads the pod."""

    def __init__(self, inner: evict.Kube, settle: Any) -> None:
        self.__dict__.update(inner.__dict__)
        self._settle_once = settle

    def read_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        if self._settle_once is not None:
            self._settle_once()
            self._settle_once = None
        return super().read_pod(namespace, name)


def test_an_outcome_its_own_round_wrote_meanwhile_is_kept(server, tmp_path) -> None:
    _create_namespace(server)
    kube = _kube(server, tmp_path)
    (pod,) = _running_pods(server, 1)
    reserved_at = NOW - datetime.timedelta(minutes=10)
    own = _store(kube, reserved_at)
    reservation = _reservation(pod, round_id="slow")
    own.reserve(reservation)
    settler = _store(_SettledMeanwhile(kube, lambda: own.settle(reservation, "evicted")), NOW)
    # The pod is still there (the round's answer came late, its pod not yet
    # terminating): a release would be wrong, and the re-read keeps it from happening.
    assert settler.settle_pending() == ()
    assert _outcomes(own) == {"slow": "evicted"}


def test_a_round_writes_its_state_without_reading_it_again_until_someone_else_writes(
    server, tmp_path
) -> None:
    # A round updates its state twice per eviction: each update starts from what it
    # last wrote, and the resourceVersion it carries sends it back to a read when
    # anyone else wrote in between (another round's reservation, a suspension).
    _create_namespace(server)
    kube = _kube(server, tmp_path)
    first, second, third = _running_pods(server, 3)
    store = _store(kube, NOW)
    server.sim.requests.clear()
    for pod in (first, second):
        reservation = _reservation(pod, round_id="r")
        store.reserve(reservation)
        store.settle(reservation, "evicted")
    counts = server.sim.requests.counts()
    assert counts.get(("get", "configmaps"), 0) == 1  # before the first write only
    assert counts.get(("create", "configmaps"), 0) + counts.get(("update", "configmaps"), 0) == 4
    other = _store(kube, NOW)
    other.reserve(_reservation(third, round_id="other"))
    other.set_suspended(True, by="on-call", reason="incident")
    with pytest.raises(evict.SuspendedError):
        store.reserve(_reservation(third, round_id="r"))

    def key(pod: dict[str, Any]) -> str:
        return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"

    assert {(r.round, r.pod, r.outcome) for r in _store(kube, NOW).records()} == {
        ("r", key(first), "evicted"),
        ("r", key(second), "evicted"),
        ("other", key(third), "reserved"),
    }
