"""``connect``: join the Ray cluster referee's actors run on, never starting a second one.

A trainer that already runs Ray (veRL, NeMo RL, OpenRLHF) has called ``ray.init``; referee's pool
then joins that driver's cluster as it is. Otherwise ``"local"`` starts a Ray instance on this
machine, sized to it (every CPU, no dashboard, quiet logs), and an address (``HOST:PORT``,
``auto``, ``ray://HOST:PORT``) joins a running cluster. Ray missing, or an address nobody answers
on, is a :class:`~referee.errors.ConfigError` naming the fix, before any work starts.

>>> connect("local")                                   # doctest: +SKIP
{'address': '10.0.0.5:6379', 'nodes': 1, 'cpus': 2.0, 'started': True}
>>> connect("local")["started"]  # already initialised: joined as it is  # doctest: +SKIP
False
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

from referee.errors import ConfigError
from referee.optional import require_extra

__all__ = ["LOCAL", "connect"]

#: The address that starts a Ray instance on this machine.
LOCAL = "local"
#: Seconds to wait for a cluster's head to accept a connection before giving up.
REACH_TIMEOUT_S = 5.0


def _check_reachable(address: str) -> None:
    """Refuse an address whose head does not accept a TCP connection (``ray.init`` would
    retry for a minute and then fail with a traceback)."""
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(
            f"--ray {address!r} is not a Ray address; give HOST:PORT of the cluster's head "
            "(as `ray start --head` prints it), 'auto' on a node of the cluster, or 'local'"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=REACH_TIMEOUT_S):
            pass
    except OSError as e:
        raise ConfigError(
            f"no Ray cluster answers at {address} ({e.strerror or e}); start one with "
            "`ray start --head`, check the address and port, or use --ray local"
        ) from None


def _describe(ray: Any, started: bool) -> dict[str, Any]:
    context = ray.get_runtime_context()
    resources = ray.cluster_resources()
    return {
        "address": getattr(context, "gcs_address", ""),
        "nodes": sum(1 for n in ray.nodes() if n.get("Alive")),
        "cpus": float(resources.get("CPU", 0.0)),
        "started": started,
    }


def connect(address: str | None = None) -> dict[str, Any]:
    """Join (or start) the Ray cluster; returns ``address``, ``nodes``, ``cpus`` and whether
    this call ``started`` Ray.

    ``address``: ``None`` (the ``RAY_ADDRESS`` environment variable's cluster, else a local
    instance), ``"local"``, or a cluster address. When Ray is already initialised in this
    process, its cluster is used whatever ``address`` says: ``ray.init`` is never called twice.
    """
    require_extra("ray", needed_for="referee's Ray cluster support (--ray)")
    import ray

    if ray.is_initialized():
        return _describe(ray, started=False)
    if address is None:
        address = os.environ.get("RAY_ADDRESS") or LOCAL
    # Ray's start-up notes (token authentication switched on, and the like) are not referee's
    # output: only errors are logged while it starts (its loggers set their own levels).
    disabled = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        if address == LOCAL:
            ray.init(
                address="local",
                num_cpus=os.cpu_count() or 1,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
            )
        else:
            if address != "auto":
                _check_reachable(address)
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except ConfigError:
        raise
    except (ConnectionError, RuntimeError, ValueError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        raise ConfigError(
            f"could not join the Ray cluster at {address}: {first}; check that `ray status` "
            "works on that node (same Ray version, 2.60.0), or use --ray local"
        ) from None
    finally:
        logging.disable(disabled)
    return _describe(ray, started=True)
