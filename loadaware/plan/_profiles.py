"""Profiles: named scopes (namespaces, labels, node pools) for the strategies.

A profile narrows the evictor: a pod must pass both the evictor's namespaces
and labelSelector and the profile's. With no profiles in the policy there is
one implicit profile, "default", with the evictor's scope, every node pool and
loadBalancing alone, which is what loadaware did before profiles existed.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from loadaware.cluster import ClusterState, LabelSelector, Requirement
from loadaware.plan._candidates import EvictionRules
from loadaware.plan._types import StrategyCount
from loadaware.policy import LoadAwarePolicy, Profile, Strategies

DEFAULT_PROFILE = "default"
# A namespace name the API never allows: an include list of only this selects nothing.
_NO_NAMESPACE = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class ScopedProfile:
    name: str
    strategies: Strategies
    rules: EvictionRules  # the evictor narrowed to the profile
    pools: frozenset[str] | None  # None: every pool

    def covers_pool(self, pool: str | None) -> bool:
        return self.pools is None or pool in self.pools


def scoped_profiles(policy: LoadAwarePolicy, cluster: ClusterState) -> tuple[ScopedProfile, ...]:
    """The round's profiles, in policy order; PolicyError as EvictionRules.from_policy."""
    base = EvictionRules.from_policy(policy.evictor, cluster)
    if not policy.profiles:
        return (
            ScopedProfile(name=DEFAULT_PROFILE, strategies=Strategies(), rules=base, pools=None),
        )
    return tuple(
        ScopedProfile(
            name=p.name,
            strategies=p.strategies,
            rules=_narrow(base, p),
            pools=None if p.node_pools is None else frozenset(p.node_pools),
        )
        for p in policy.profiles
    )


def _narrow(rules: EvictionRules, profile: Profile) -> EvictionRules:
    # pod_eligibility reads include before exclude, so the result is folded into one of them.
    include = set(rules.namespaces_include)
    if profile.namespaces.include:
        include = (
            (include & set(profile.namespaces.include))
            if include
            else set(profile.namespaces.include)
        )
        if not include:
            include = {_NO_NAMESPACE}
    exclude = set(rules.namespaces_exclude) | set(profile.namespaces.exclude)
    if include:
        include = (include - exclude) or {_NO_NAMESPACE}
    selector = rules.label_selector
    spec = profile.label_selector
    if spec.match_labels or spec.match_expressions:
        # The profile's matchLabels become In requirements so that a key both set
        # differently simply matches no pod.
        extra = tuple(
            Requirement(key=k, operator="In", values=(v,)) for k, v in spec.match_labels.items()
        ) + tuple(
            Requirement(key=r.key, operator=r.operator, values=tuple(r.values))
            for r in spec.match_expressions
        )
        selector = LabelSelector(
            match_labels=MappingProxyType(dict(selector.match_labels)) if selector else {},
            match_expressions=(selector.match_expressions if selector else ()) + extra,
        )
    return dataclasses.replace(
        rules,
        namespaces_include=frozenset(include),
        namespaces_exclude=frozenset(exclude),
        label_selector=selector,
    )


@dataclass(kw_only=True)
class Tally:
    """Per profile and rule (eviction reason), how many pods were planned and skipped."""

    planned: Counter[tuple[str, str]] = field(default_factory=Counter)
    skipped: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    rules: dict[str, list[str]] = field(default_factory=dict)  # profile -> rules it runs

    def declare(self, profile: str, rule: str) -> None:
        self.rules.setdefault(profile, [])
        if rule not in self.rules[profile]:
            self.rules[profile].append(rule)

    def skip(self, profile: str, rule: str, why: str) -> None:
        self.skipped.setdefault((profile, rule), Counter())[why] += 1

    def as_plan(self) -> Mapping[str, Mapping[str, StrategyCount]]:
        return {
            profile: {
                rule: StrategyCount(
                    planned=self.planned[(profile, rule)],
                    skipped=sum(self.skipped.get((profile, rule), Counter()).values()),
                    skipped_reasons=dict(sorted(self.skipped.get((profile, rule), {}).items())),
                )
                for rule in rules
            }
            for profile, rules in self.rules.items()
        }
