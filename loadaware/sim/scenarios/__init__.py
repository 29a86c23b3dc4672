"""Generated clusters: raw Kubernetes objects plus a `--metrics` document.

The objects are what `kubectl get nodes,pods,pdb,rs,deploy,sts,ds -A -o json`
prints (apiVersion, kind, metadata, spec, status), so that everything reading a
real dump (the loader, `loadaware plan`, the simulated API server) reads these
too. The metrics document is the `--metrics FILE` format of DESIGN.md.

The story behind every cluster: a few nodes failed some hours ago and their
replicas were re-created on the survivors, which kube-scheduler packed by
requests. The failed nodes were replaced, and the replacements sit nearly
empty, because nothing moves pods back. The survivors that took the extra
replicas are now hot (75-95 % cpu and/or memory of allocatable at peak), the
replacements cold, the rest at a level set by `capacity` ("loose": the cluster
as a whole at about 40 %, "tight": about 63 %). Usage is heavy-tailed against
requests on cpu (a few pods burst to 2-3x their request), closer to requests on
memory, and never above a container limit.

Requests fit allocatable on every node; a node's usage is the sum of its pods'
usage plus a system overhead, so node and pod metrics agree.

Sharing, for speed at 150,000 pods: every object, its `metadata` (labels,
annotations and ownerReferences included), its `spec` and its `status` (all the
way down) are its own dicts. Deeper parts of a pod's spec -- `containers`,
`volumes` (except a StatefulSet pod's, which names its own claim),
`tolerations`, `affinity` (except a DaemonSet pod's, which names its node) and
`nodeSelector` -- are shared between the pods of one workload, and the entries
of the nodes' `status.images` between the nodes reporting them: treat them as
read-only, or copy them before changing them. Controllers' pod templates are
their own copies.

Every node reports in `status.images` what its kubelet has pulled: the images of
the pods placed on it and the sandbox (pause) image, each under its digest and
its tag, with a size derived from its name (`_images`: the same on every node,
and drawing nothing from the generator's random numbers).

Two families of clusters (`family`):

- "proportional" (the default, the story above): usage follows requests. A
  node's usage is its requests times a ratio that varies little between nodes,
  so the nodes that request least also use least, and a scheduler that places
  by requests sends replacements to cool nodes.
- "usage-independent": what real clusters look like once requests stop being
  revisited. Every workload has its own usage/request ratio on cpu, heavy-tailed
  between 0.3x and 3x (log-normal, clipped), and a node's usage is drawn apart
  from its requests. Two kinds of nodes make the difference visible: warm
  nodes (about 7 %) that request little -- a quarter of allocatable -- yet run
  at 55-65 % cpu, just under targetThresholds, on under-requested workloads;
  and reserved nodes (about 12 %) that hold 70-85 % of allocatable in requests
  and use 15-25 %. Hot nodes (same share as the other family) are hot by usage
  whatever they request. Requests-based placement prefers exactly the warm
  nodes, which a replacement would turn hot. Pods are placed so that their
  ratios match their node (workloads are banded by ratio, nodes by the usage
  per request they need), then scaled per node to its target; memory stays
  nearer its requests, as it does in practice.

Generation is deterministic for a (parameters, seed, now) triple.

The modules: `_catalogue` (the data clusters are made of), `_families` (nodes and
their classes by family), `_workloads`, `_placement`, `_usage`, the rendering of
nodes, pods and controllers (`_render_nodes`, `_render_pods`, `_render_workloads`,
`_fields`), `_generator` (the steps joined; `generate_cluster`), `_hand_laid` and
`_builtin` (the named scenarios).
"""

from loadaware.sim.scenarios._base import Scenario
from loadaware.sim.scenarios._builtin import DEFAULT_SCENARIO, SCENARIO_NAMES, builtin_scenario
from loadaware.sim.scenarios._catalogue import FAMILIES, Capacity, Family
from loadaware.sim.scenarios._fields import (
    cpu_quantity,
    memory_quantity,
    owner_reference,
    pinned_to,
)
from loadaware.sim.scenarios._generator import generate_cluster
from loadaware.sim.scenarios._render_nodes import node_conditions, node_object

__all__ = [
    "DEFAULT_SCENARIO",
    "FAMILIES",
    "SCENARIO_NAMES",
    "Capacity",
    "Family",
    "Scenario",
    "builtin_scenario",
    "cpu_quantity",
    "generate_cluster",
    "memory_quantity",
    "node_conditions",
    "node_object",
    "owner_reference",
    "pinned_to",
]
