"""loadaware: a load-aware rebalancer for Kubernetes.

It reads what nodes and pods really use, decides which running pods to move
off hotspot nodes so that kube-scheduler re-places them on cooler ones, and
evicts them through the policy/v1 Eviction API within budgets. It refuses to
act on stale or missing metrics.
"""

__version__ = "0.1.0"
