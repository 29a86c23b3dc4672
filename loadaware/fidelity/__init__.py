"""The model's fidelity, measured live: each pod the cluster's scheduler binds,
compared with where the kube-scheduler model (`loadaware.scheduling`) would have
put it, kept as a sliding window of agreement per schedulerName.

- `compare_binding`: the rule, on one pod and the cluster just before its binding
  (agreed when the bound node could be the best of a sample kube-scheduler
  scores; see `_rule`);
- `ClusterMirror`: the scheduler's view of the cluster, kept by the cluster
  cache's changes;
- `BindingObserver`: listens to a `cluster.ClusterCache`, compares every new
  binding of a modelled pod off the watch thread, records it in a
  `scheduling.AgreementWindow`, and reads it back (`snapshot`, a
  `scheduling.ModelAgreement`).

What is measured here is read by `serve` (metrics, /status), by `loadaware
scheduler check`, and by the round's guard through the runtime's wiring; this
package changes nothing in the cluster.
"""

from loadaware.fidelity._mirror import ClusterMirror
from loadaware.fidelity._observer import BindingObserver
from loadaware.fidelity._rule import compare_binding

__all__ = ["BindingObserver", "ClusterMirror", "compare_binding"]
