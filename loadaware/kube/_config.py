"""The one way loadaware makes a Kubernetes ApiClient.

Configuration: an explicit kubeconfig path, else in-cluster config when running
in a pod (KUBERNETES_SERVICE_HOST), else the client's default kubeconfig
($KUBECONFIG, ~/.kube/config); `context` picks a kubeconfig context. A file that
does not exist or a context it lacks is an InputError naming it (the client's
own words are "No configuration found").
"""

from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loadaware.errors import InputError

# The client is imported where a call needs it: commands that read files never load it.
if TYPE_CHECKING:
    import kubernetes.client

_HINT = "pass --kubeconfig PATH (and --context NAME), or run inside a pod"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSettings:
    kubeconfig: str | None = None
    context: str | None = None
    in_cluster: bool | None = None  # None: when KUBERNETES_SERVICE_HOST is set and no kubeconfig
    qps: float = 50.0
    burst: int = 100
    connect_timeout_seconds: float = 5.0
    read_timeout_seconds: float = 60.0
    page_size: int = 500
    retries: int = 3


def api_client(
    settings: ClientSettings | None = None,
    *,
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
) -> kubernetes.client.ApiClient:
    """An ApiClient configured from the settings (or just a kubeconfig and context);
    InputError when no configuration is usable."""
    import kubernetes

    if settings is None:
        settings = ClientSettings(
            kubeconfig=os.fspath(kubeconfig) if kubeconfig is not None else None, context=context
        )
    configuration = kubernetes.client.Configuration()
    in_cluster = settings.in_cluster
    if in_cluster is None:
        in_cluster = settings.kubeconfig is None and "KUBERNETES_SERVICE_HOST" in os.environ
    where = _describe(settings, in_cluster)
    if not in_cluster and settings.kubeconfig and not pathlib.Path(where).is_file():
        raise InputError(f"kubeconfig {where} does not exist or is not a file", hint=_HINT)
    try:
        if in_cluster:
            kubernetes.config.load_incluster_config(client_configuration=configuration)
        else:
            kubernetes.config.load_kube_config(
                config_file=settings.kubeconfig,
                context=settings.context,
                client_configuration=configuration,
                persist_config=False,
            )
    except (kubernetes.config.ConfigException, OSError, TypeError, ValueError) as exc:
        raise InputError(
            f"cannot load Kubernetes configuration ({where or 'in-cluster config'}): {exc}",
            hint=_HINT,
        ) from exc
    # Retries are ours (bounded, paced); urllib3's own would hide failures.
    configuration.retries = False
    # The cluster cache holds one connection per watched kind; the round's own calls
    # need theirs beside them, or each would open and drop a new one.
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize or 0, 32)
    return kubernetes.client.ApiClient(configuration)


def _describe(settings: ClientSettings, in_cluster: bool) -> str:
    """The kubeconfig file(s) the client reads; "" for in-cluster config."""
    if in_cluster:
        return ""
    if settings.kubeconfig is not None:
        return settings.kubeconfig
    # As the client: $KUBECONFIG's files, else ~/.kube/config.
    return os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
