"""The one boundary between loadaware and the Kubernetes API: the official client's
configuration, every call made through it, and one translation of its errors.

- `api_client(settings)`: the only ApiClient factory (kubeconfig and context,
  in-cluster config, or the default kubeconfig); a kubeconfig that does not
  exist is an InputError naming it.
- `translated(doing, server)`: ApiException, urllib3, socket and TLS errors as
  loadaware's ClusterError family (see errors.py), with the server and the
  cause named and no body or token quoted. `status_of` reads a Status body.
- `raw_request`: the raw list pages and watch streams the cluster reader and
  its cache read (lists and watches of every kind).
- `Kube`: typed reads and writes (pods, evictions, node taints, namespaces,
  ConfigMaps, Events); `Leases`: leader election's Lease.

Limits: no retries here (the callers pace and retry as their protocol needs),
no caching (cluster.ClusterCache answers Kube's reads when given as `reads`).
"""

from loadaware.kube._api import FIELD_MANAGER, Kube, Leases, RawObject, Reads
from loadaware.kube._config import ClientSettings, api_client
from loadaware.kube._errors import (
    CONNECTION_ERRORS,
    MESSAGE_MAX_CHARS,
    Status,
    api_error,
    cause_of,
    server_of,
    status_of,
    translated,
    unreachable_error,
)
from loadaware.kube._rest import ErrorAnswer, raw_request, read_error

__all__ = [
    "CONNECTION_ERRORS",
    "FIELD_MANAGER",
    "MESSAGE_MAX_CHARS",
    "ClientSettings",
    "ErrorAnswer",
    "Kube",
    "Leases",
    "RawObject",
    "Reads",
    "Status",
    "api_client",
    "api_error",
    "cause_of",
    "raw_request",
    "read_error",
    "server_of",
    "status_of",
    "translated",
    "unreachable_error",
]
