"""Converting a kubernetes-sigs/descheduler DeschedulerPolicy into a LoadAwarePolicy.

Reads `descheduler/v1alpha2` (profiles of plugins with their pluginConfig) and
the older `descheduler/v1alpha1` (a map of strategies with params), either bare
or inside the ConfigMap the descheduler's Helm chart mounts (`policy.yaml`).
v1alpha1 is first turned into v1alpha2 the way the descheduler itself did it
before v0.31 (_v1alpha1), then both go through one converter (_document, with
_profiles and _plugins).

Every source setting either maps onto a LoadAwarePolicy field with the same
meaning, or is reported as a ConversionIssue saying why it does not (see
_descheduler). Used only by the `loadaware convert` command.

Limits: pure; apart from reading the file in load_descheduler_policy, no I/O.
It imports only the policy package (and the errors).
"""

from loadaware.convert._descheduler import (
    Conversion,
    convert_descheduler_policy,
    load_descheduler_policy,
    render_conversion_yaml,
    render_issues_table,
)
from loadaware.convert._issues import ConversionIssue

__all__ = [
    "Conversion",
    "ConversionIssue",
    "convert_descheduler_policy",
    "load_descheduler_policy",
    "render_conversion_yaml",
    "render_issues_table",
]
