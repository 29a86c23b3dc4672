"""The simulated control plane: what reacts to API writes in a real cluster, one
module per controller.

- kubelet (`_kubelet`): a bound pod starts (ContainerCreating, then Running and
  Ready `ready_delay` simulated seconds after binding); a terminating pod is
  removed once its grace period has passed. Nothing happens on a NotReady node.
- node lifecycle (`_node_lifecycle`): a NotReady node's conditions turn Unknown,
  it is tainted unreachable and its pods are marked not Ready.
- kube-scheduler (`_scheduler`): Pending pods go where the planner's
  kube-scheduler model puts them, from a sample of the nodes above 100 as
  kube-scheduler does by default; preemption is not modelled.
- ReplicaSet, Deployment, StatefulSet, DaemonSet and Job controllers
  (`_replicaset`, `_deployment`, `_statefulset`, `_daemonset`, `_job`), with
  their status.
- disruption controller (`_disruption`): each PodDisruptionBudget's status.
- garbage collector (background propagation) and namespace deletion
  (`_garbage_collector`).

`Controllers` runs them in rounds (`_control_plane`); `Runner` runs rounds in a
thread. Each module's docstring states its limits.
"""

from loadaware.sim.controllers._control_plane import Controllers, Runner
from loadaware.sim.controllers._daemonset import daemon_set_nodes

__all__ = ["Controllers", "Runner", "daemon_set_nodes"]
