"""The guard before a round acts on its landings (round/_model_guard): when the
recent agreement of the model with the cluster's scheduler is known to be under
steering.minModelAgreement, a live round is refused (scheduler-model-disagrees,
exit 3) before it plans, taints or evicts; its audit record holds the figures.
The agreement is the round's input (serve measures it); here a fixed one.
"""

from __future__ import annotations

from types import MappingProxyType

import pytest

from loadaware import cli, errors, evict, policy, report, scheduling
from loadaware import round as rounds
from loadaware.round._model_guard import check_model_agreement
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import sim_server


def _agreement(observed: int, agreed: int) -> scheduling.ModelAgreement:
    example = scheduling.Binding(
        pod="shop/web-1",
        scheduler_name="default-scheduler",
        node="node-7",
        agreed=False,
        predicted=("node-2", "node-3"),
        reason="bound outside the landing set",
    )
    return scheduling.ModelAgreement(
        by_profile=MappingProxyType(
            {"default-scheduler": scheduling.ProfileAgreement(observed=observed, agreed=agreed)}
        ),
        examples=(example,) if agreed < observed else (),
    )


def test_low_agreement_refuses_a_live_round_with_the_figures_and_the_fix() -> None:
    check = check_model_agreement(
        policy.LoadAwarePolicy(), lambda: _agreement(40, 30), dry_run=False
    )
    error = check.refusal
    assert isinstance(error, evict.ModelDisagreesError)
    assert check.figures is not None
    assert check.figures["below"] is True
    assert error.reference == "scheduler-model-disagrees"
    assert error.exit_code == 3
    message = str(error)
    assert "75.0% of the last 40 bindings" in message
    assert "steering.minModelAgreement 95%" in message
    assert "from 20 bindings" in message
    assert "shop/web-1 bound to node-7, predicted node-2, node-3" in message
    assert "steering.schedulerConfig" in (error.hint or "")


def test_too_few_bindings_say_nothing() -> None:
    check = check_model_agreement(
        policy.LoadAwarePolicy(), lambda: _agreement(19, 0), dry_run=False
    )
    assert check.refusal is None
    figures = check.figures
    assert figures is not None
    assert figures["below"] is False
    assert figures["observed"] == 19


def test_agreement_at_the_bound_lets_the_round_go_on() -> None:
    check = check_model_agreement(
        policy.LoadAwarePolicy(), lambda: _agreement(100, 95), dry_run=False
    )
    assert check.refusal is None
    figures = check.figures
    assert figures is not None
    assert figures["ratio"] == 0.95
    assert figures["below"] is False


def test_without_soft_taints_the_round_is_refused_too() -> None:
    # The natural landings the plan then relies on come from the same model.
    settings = policy.parse_policy({"steering": {"softTaint": False}})
    check = check_model_agreement(settings, lambda: _agreement(40, 0), dry_run=False)
    assert isinstance(check.refusal, evict.ModelDisagreesError)


def test_min_model_agreement_zero_turns_the_guard_off() -> None:
    settings = policy.parse_policy({"steering": {"minModelAgreement": 0}})
    check = check_model_agreement(settings, lambda: _agreement(40, 0), dry_run=False)
    assert check.refusal is None
    figures = check.figures
    assert figures is not None
    assert figures["below"] is False


def test_a_dry_run_goes_on_and_says_what_it_found() -> None:
    check = check_model_agreement(
        policy.LoadAwarePolicy(), lambda: _agreement(40, 10), dry_run=True
    )
    assert check.refusal is None
    figures = check.figures
    assert figures is not None
    assert figures["below"] is True
    assert figures["examples"][0]["node"] == "node-7"


def test_unmeasured_agreement_is_no_guard() -> None:
    check = check_model_agreement(policy.LoadAwarePolicy(), None, dry_run=False)
    assert check.figures is None
    assert check.refusal is None


def test_the_defaults() -> None:
    defaults = policy.LoadAwarePolicy().steering
    assert defaults.min_model_agreement == 0.95
    assert defaults.min_agreement_observations == 20
    assert defaults.max_off_set_landings == 2


@pytest.mark.parametrize(
    "steering",
    [{"minAgreementObservations": 0}, {"minModelAgreement": 1.5}, {"maxOffSetLandings": -1}],
)
def test_bad_settings_are_named(steering: dict[str, object]) -> None:
    with pytest.raises(errors.PolicyError) as raised:
        policy.parse_policy({"steering": steering})
    assert f"steering.{next(iter(steering))}" in str(raised.value)


def test_a_live_round_is_refused_before_anything_is_changed(tmp_path) -> None:
    settings = metrics_server_policy()
    with sim_server("small", ready_delay=5.0) as server:
        before = {p["metadata"]["uid"] for p in server.list("pods")}
        context = live_context(
            server, tmp_path, settings, model_agreement=lambda: _agreement(50, 20)
        )
        result = rounds.run_round(settings, context)
        after = {p["metadata"]["uid"] for p in server.list("pods")}
        taints = [t for n in server.list("nodes") for t in n["spec"].get("taints") or []]
    assert isinstance(result.error, evict.ModelDisagreesError)
    assert cli._exit_code(result) == 3
    audit = report.round_to_json(result.record)
    assert audit["status"] == "refused"
    assert audit["exitCode"] == 3
    assert audit["reason"].startswith("scheduler-model-disagrees: the model agreed")
    assert audit["modelAgreement"]["ratio"] == 0.4
    assert audit["modelAgreement"]["below"] is True
    assert audit["plan"] is None
    assert audit["evictions"] == []
    assert after == before
    assert not any(t["key"] == evict.HOTSPOT_TAINT_KEY for t in taints)


def test_a_live_round_with_a_good_agreement_goes_on(tmp_path) -> None:
    settings = metrics_server_policy()
    with sim_server("small", ready_delay=5.0) as server:
        context = live_context(
            server, tmp_path, settings, model_agreement=lambda: _agreement(50, 50)
        )
        result = rounds.run_round(settings, context)
    audit = report.round_to_json(result.record)
    assert result.error is None, audit["reason"]
    assert audit["modelAgreement"]["below"] is False
    assert any(e["result"] == "evicted" for e in audit["evictions"])
