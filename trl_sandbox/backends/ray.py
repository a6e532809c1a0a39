"""The ``ray`` backend: each sandbox is a Ray actor running one local-backend sandbox on the node Ray places it on.

The isolation is the local backend's, unchanged (:mod:`._ray_actor` builds a
:class:`~trl_sandbox.backends.local.LocalBackend` in the actor's process); Ray only places the sandboxes across a
cluster's nodes and carries the calls. Actors are named (``{id}.{labels}`` in the backend's namespace, the labels
encoded in the name), so :meth:`RayBackend.list` finds them from any process (``trl-sandbox cleanup --backend ray``,
the orphan sweep), and they are *not* detached: owned by the driver process that created them, they die with it.

Ray is imported only when the backend starts: ``import trl_sandbox`` and the other backends never need it.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import socket
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from ..errors import ConfigurationError, InfrastructureError, TrlSandboxError
from ._remote import RemoteImages
from .base import Backend, ExecResult, ImageRef, Sandbox, SandboxProcess

logger = logging.getLogger(__name__)

_INSTALL = 'the ray backend needs Ray: pip install "trl-sandbox[ray]"'
_NAME_PREFIX = "trl-sandbox-"
_PLACEMENTS = {"spread": "SPREAD", "pack": "DEFAULT"}


def _encode_labels(labels: Mapping[str, str]) -> str:
    raw = json.dumps(dict(labels), sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_name(name: str) -> tuple[str, dict[str, str]] | None:
    """``(sandbox id, labels)`` of an actor name this backend gave, else None."""
    if not name.startswith(_NAME_PREFIX) or "." not in name:
        return None
    sandbox_id, _, encoded = name.partition(".")
    try:
        labels = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except ValueError:
        return None
    if not isinstance(labels, dict):
        return None
    return sandbox_id, {str(k): str(v) for k, v in labels.items()}


class RayBackend(Backend):
    """Sandboxes as Ray actors, one local-backend sandbox each, spread over a Ray cluster's nodes.

    Every node that may hold sandboxes needs this package installed (the actor imports it) and the kernel features
    the local backend uses (namespaces, Landlock, seccomp, cgroups; see docs/backends.md, "Ray backend").

    Args:
        address: The Ray cluster to join. Default: ``$RAY_ADDRESS``, else ``"auto"`` (the cluster started on this
            machine with ``ray start --head``). Never starts a Ray instance of its own. When this process has already
            joined a cluster (``ray.init``), that one is used.
        num_cpus: CPUs Ray reserves per sandbox (a float: 0.5 puts two sandboxes per CPU).
        resources: Custom Ray resources per sandbox, e.g. ``{"sandbox": 1}``: sandboxes then go only to the nodes
            started with that resource (``ray start --resources '{"sandbox": 8}'``).
        placement: ``"spread"`` (default; Ray's SPREAD strategy: sandboxes across the nodes) or ``"pack"`` (Ray's
            default strategy: fill a node before the next).
        namespace: The Ray namespace of the sandbox actors.
        create_timeout_s: Deadline for an actor to be placed and its sandbox made; past it (a full cluster, no node
            with the resources), the creation fails with an infrastructure error instead of waiting.
        exec_grace_s: Seconds past a command's own timeout that the driver waits for its actor's answer.
        local_options: Keyword arguments of each actor's :class:`~trl_sandbox.backends.local.LocalBackend`
            (``memory_limit_bytes``, ``output_limit_bytes``, ``site_packages``, ``allow_weak_isolation``...).
        image_cache: The image cache directory on the nodes that repository tasks' images are read from
            (``trl-sandbox images import`` there, or a shared filesystem). Default: each node's own
            (``$TRL_SANDBOX_CACHE/images``, else ``~/.cache/trl-sandbox/images``, as the node's Ray worker sees it).

    Raises:
        ConfigurationError: Ray is not installed, or an option is invalid.
    """

    name = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        num_cpus: float = 1.0,
        resources: Mapping[str, float] | None = None,
        placement: str = "spread",
        namespace: str = "trl-sandbox",
        create_timeout_s: float = 120.0,
        exec_grace_s: float = 30.0,
        local_options: Mapping[str, Any] | None = None,
        image_cache: str | os.PathLike[str] | None = None,
    ) -> None:
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise ConfigurationError(_INSTALL)
        if placement not in _PLACEMENTS:
            raise ConfigurationError(f"ray backend: placement must be 'spread' or 'pack', got {placement!r}")
        if not isinstance(num_cpus, (int, float)) or num_cpus < 0:
            raise ConfigurationError(f"ray backend: num_cpus must be a non-negative number, got {num_cpus!r}")
        if resources is not None and not isinstance(resources, Mapping):
            raise ConfigurationError(f"ray backend: resources must be a mapping of name to amount, got {resources!r}")
        if not namespace or not isinstance(namespace, str):
            raise ConfigurationError(f"ray backend: namespace must be a non-empty string, got {namespace!r}")
        self.address = address or os.environ.get("RAY_ADDRESS") or "auto"
        self.num_cpus = float(num_cpus)
        self.resources = dict(resources or {})
        self.placement = placement
        self.namespace = namespace
        self.create_timeout_s = float(create_timeout_s)
        self.exec_grace_s = float(exec_grace_s)
        self.local_options = dict(local_options or {})
        self.image_cache = str(image_cache) if image_cache is not None else None
        self._actor_class: Any = None
        self._layers = ""

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Join the Ray cluster (or use the one this process joined).

        Raises:
            ConfigurationError: Ray is not installed, or no Ray cluster answers at the address.
        """
        if self._actor_class is not None:
            return
        try:
            import ray
        except ImportError as exc:
            raise ConfigurationError(_INSTALL) from exc
        if not ray.is_initialized():
            await anyio.to_thread.run_sync(self._connect, ray)
        from ._ray_actor import SandboxActor

        self._actor_class = ray.remote(SandboxActor)

    def _connect(self, ray: Any) -> None:
        address = self.address
        hint = (f"ray backend: no Ray cluster reachable at {address!r}; start one with `ray start --head` (and "
                "`ray start --address=<head>:6379` on the other nodes), or set RAY_ADDRESS / the address option")
        if address not in ("auto", "local") and not address.startswith("ray://"):
            host, _, port = address.rpartition(":")
            try:  # Ray itself retries an unreachable address for a minute or more
                socket.create_connection((host or "127.0.0.1", int(port)), timeout=5).close()
            except (OSError, ValueError):
                raise ConfigurationError(hint) from None
        if address == "local":
            raise ConfigurationError(hint)  # "local" would start a private Ray instance: never done silently
        # The pool's thread joins the cluster, by design: not Ray's warning that it sets no SIGTERM handler there.
        worker_logger = logging.getLogger("ray._private.worker")
        worker_logger.addFilter(_no_sigterm_warning)
        try:
            ray.init(address=address, namespace=self.namespace, logging_level=logging.WARNING)
        except ConnectionError as exc:
            raise ConfigurationError(hint) from exc
        finally:
            worker_logger.removeFilter(_no_sigterm_warning)

    def describe(self) -> str:
        nodes = ""
        try:
            import ray

            if ray.is_initialized():
                nodes = f", {sum(1 for n in ray.nodes() if n.get('Alive'))} nodes"
        except Exception:  # noqa: BLE001 - only a log line
            pass
        per = f"{self.num_cpus:g} CPU" + "".join(f", {v:g} {k}" for k, v in self.resources.items())
        return (f"ray (actors in namespace {self.namespace!r}{nodes}, {self.placement}, {per} each); each sandbox: "
                f"{self._layers or 'local backend'}")

    # -- contract --------------------------------------------------------------------------------------------------

    async def create(self, labels: Mapping[str, str]) -> Sandbox:
        """Start one actor (placed by Ray) and its local sandbox, within ``create_timeout_s``.

        Raises:
            InfrastructureError: no node placed the actor in time (the cluster is full, or no node has the
                resources), or its sandbox could not be made.
            ConfigurationError: the node cannot isolate code (the local backend's start failed).
        """
        if self._actor_class is None:
            await self.start()
        sandbox_id = f"{_NAME_PREFIX}{uuid.uuid4().hex[:16]}"
        name = f"{sandbox_id}.{_encode_labels(labels)}"
        options: dict[str, Any] = {
            "name": name,
            "namespace": self.namespace,
            "num_cpus": self.num_cpus,
            "scheduling_strategy": _PLACEMENTS[self.placement],
            "max_restarts": 0,
        }
        if self.resources:
            options["resources"] = self.resources
        actor = self._actor_class.options(**options).remote(dict(labels), self.local_options)
        try:
            with anyio.fail_after(self.create_timeout_s):
                info = await _call(actor.setup)
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await self._kill(actor)
            if isinstance(exc, TimeoutError):
                raise InfrastructureError(
                    f"ray backend: no sandbox actor was ready within {self.create_timeout_s:g}s (a full cluster, or "
                    f"no node with num_cpus={self.num_cpus:g}"
                    + (f" and resources {self.resources}" if self.resources else "") + ")"
                ) from None
            raise
        self._layers = info["describe"]
        return Sandbox(id=sandbox_id, labels=dict(labels), workdir=info["workdir"], python=info["python"],
                       data={"name": name, "actor": actor, "node_id": info["node_id"], "pid": info["pid"]})

    async def write_files(self, sandbox: Sandbox, files: Mapping[str, bytes]) -> None:
        actor = await self._actor(sandbox)
        with _deadline(self.create_timeout_s, sandbox, "write files"):
            await _call(actor.write_files, dict(files))

    async def exec(self, sandbox: Sandbox, argv: Sequence[str], *, stdin: bytes = b"", timeout_s: float) -> ExecResult:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        actor = await self._actor(sandbox)
        with _deadline(timeout_s + self.exec_grace_s, sandbox, "run a command"):
            return await _call(actor.exec, list(argv), stdin, timeout_s)

    def repo_image(self, name: str) -> ImageRef:
        """``name`` as an :class:`~trl_sandbox.backends.base.ImageRef`: the image is read on the node that runs the
        task (from ``image_cache``), not here; its ``WorkingDir`` is filled in when this host's cache holds it too
        (a Harbor task needs it). Blocking."""
        return RemoteImages.repo_image(self, name)

    async def exec_in_image(self, sandbox: Sandbox, image: Any, argv: Sequence[str], *, timeout_s: float,
                            inputs: Sequence[bytes] = (), env: Mapping[str, str] | None = None,
                            workdir: str | None = None, limits: Any = None) -> ExecResult:
        """Run ``argv`` in a tree of the image (an :class:`~trl_sandbox.backends.base.ImageRef` or a name) on the
        sandbox's node: its actor reads the image from ``image_cache`` there and runs the local backend's
        :meth:`~trl_sandbox.backends.local.LocalBackend.exec_in_image`, with the same isolation and ``limits``.

        Raises:
            InfrastructureError: the node's cache lacks the image (the message names the node and how to import it),
                the actor is gone, or it did not answer within ``timeout_s`` plus the grace of a tree's end.
        """
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        name = image.name if isinstance(image, ImageRef) else str(image)
        actor = await self._actor(sandbox)
        # a tree's end may take the local backend's teardown grace (30 s) past its own deadline
        with _deadline(timeout_s + self.exec_grace_s + 30.0, sandbox, "run a repository task"):
            return await _call(actor.exec_in_image, name, self.image_cache, list(argv), timeout_s,
                               [bytes(data) for data in inputs], dict(env or {}), workdir, limits)

    async def open_process(self, sandbox: Sandbox, argv: Sequence[str], *, timeout_s: float) -> SandboxProcess:
        actor = await self._actor(sandbox)
        with _deadline(self.create_timeout_s, sandbox, "start a session"):
            key = await _call(actor.process_start, list(argv), timeout_s)
        return RayProcess(actor, key, self.create_timeout_s)

    async def delete(self, sandbox: Sandbox) -> None:
        """Delete the actor's local sandbox, then kill the actor. A sandbox already gone is not an error.

        Raises:
            InfrastructureError: the Ray cluster could not be reached.
        """
        import ray

        if self._actor_class is not None and not ray.is_initialized():
            return  # this process left the cluster (ray.shutdown, e.g. at exit before the pool's close): the actors
            # it owned died with its connection
        try:
            actor = await self._actor(sandbox)
        except InfrastructureError:
            return  # no such actor any more
        with anyio.move_on_after(min(30.0, self.create_timeout_s)):
            try:
                await _call(actor.delete)
            except InfrastructureError:
                pass  # dead already, or its sandbox broken: killing the actor ends its processes
        await self._kill(actor)

    async def list(self, labels: Mapping[str, str]) -> list[Sandbox]:
        """The sandbox actors of this backend's namespace whose labels include ``labels`` (from any process).

        Raises:
            InfrastructureError: the Ray cluster could not be reached.
        """
        if self._actor_class is None:
            await self.start()
        import ray

        if not ray.is_initialized():
            return []  # this process left the cluster (ray.shutdown): the actors it owned died with its connection
        try:
            named = await anyio.to_thread.run_sync(lambda: ray.util.list_named_actors(all_namespaces=True))
        except Exception as exc:  # noqa: BLE001 - the cluster's error, whatever its type
            raise InfrastructureError(f"ray backend: listing the sandbox actors failed: {exc!r}") from exc
        found = []
        for entry in named:
            if entry.get("namespace") != self.namespace:
                continue
            decoded = _decode_name(entry["name"])
            if decoded is None:
                continue
            sandbox_id, have = decoded
            if all(have.get(k) == v for k, v in labels.items()):
                found.append(Sandbox(id=sandbox_id, labels=have, workdir="", python=[],
                                     data={"name": entry["name"], "actor": None}))
        return found

    # -- helpers ---------------------------------------------------------------------------------------------------

    async def _actor(self, sandbox: Sandbox) -> Any:
        data = sandbox.data if isinstance(sandbox.data, dict) else {}
        if data.get("actor") is not None:
            _require_connected()
            return data["actor"]
        if self._actor_class is None:
            await self.start()
        import ray

        name = data.get("name")
        if not name:
            raise InfrastructureError(f"ray backend: {sandbox.id} is not a ray sandbox handle")
        try:
            return await anyio.to_thread.run_sync(lambda: ray.get_actor(name, namespace=self.namespace))
        except ValueError:
            raise InfrastructureError(f"ray backend: sandbox {sandbox.id} is gone") from None
        except Exception as exc:  # noqa: BLE001
            raise InfrastructureError(f"ray backend: looking up {sandbox.id} failed: {exc!r}") from exc

    async def _kill(self, actor: Any) -> None:
        import ray

        if not ray.is_initialized():
            return
        try:
            await anyio.to_thread.run_sync(lambda: ray.kill(actor, no_restart=True))
        except Exception as exc:  # noqa: BLE001 - the actor is gone already, or the cluster is: said, not raised
            logger.debug("trl-sandbox ray backend: killing an actor failed: %r", exc)


class RayProcess(SandboxProcess):
    """An interpreter session in a ray sandbox: the local backend's process, driven through its actor."""

    def __init__(self, actor: Any, key: int, call_timeout_s: float) -> None:
        super().__init__("ray backend")
        self.actor = actor
        self.key = key
        self.call_timeout_s = call_timeout_s
        self.killed = False

    async def send(self, data: bytes) -> None:
        if self.killed:
            raise InfrastructureError("ray backend: the session process is closed")
        with anyio.fail_after(self.call_timeout_s):
            await _call(self.actor.process_send, self.key, data)

    async def _next_chunk(self) -> bytes | None:
        return await _call(self.actor.process_next_chunk, self.key)

    async def kill(self, *, wait_s: float = 0.0) -> None:
        if self.killed:
            return
        self.killed = True
        try:
            with anyio.fail_after(self.call_timeout_s + wait_s):
                await _call(self.actor.process_kill, self.key, wait_s)
        except TimeoutError:
            raise InfrastructureError("ray backend: the session's actor did not confirm its end") from None


def _no_sigterm_warning(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("SIGTERM handler is not set")


def _require_connected() -> None:
    """Raise unless this process is still in the Ray cluster: Ray would otherwise join (or start!) one on the next
    remote call."""
    import ray

    if not ray.is_initialized():
        raise InfrastructureError("ray backend: this process is no longer connected to the Ray cluster (ray.shutdown)")


async def _call(method: Any, *args: Any) -> Any:
    """``await method.remote(*args)``, with Ray's errors as this package's: the actor's own error (a
    :class:`~trl_sandbox.errors.TrlSandboxError`) as it is, any other (a dead actor or node, a lost object) as
    :class:`~trl_sandbox.errors.InfrastructureError`."""
    from ray.exceptions import RayError, RayTaskError

    _require_connected()
    try:
        return await method.remote(*args)
    except RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, TrlSandboxError):
            raise cause from None
        if isinstance(cause, ValueError):
            raise cause from None
        logger.debug("trl-sandbox ray backend: the sandbox actor failed: %s", exc)
        raise InfrastructureError(f"ray backend: the sandbox actor failed: {cause or exc!r}"[:1000]) from exc
    except RayError as exc:
        raise InfrastructureError(f"ray backend: the sandbox actor is gone ({type(exc).__name__})") from exc


class _deadline:
    """``anyio.fail_after`` whose timeout is the infrastructure's: an actor that does not answer is a broken one."""

    def __init__(self, seconds: float, sandbox: Sandbox, what: str) -> None:
        self.scope = anyio.fail_after(seconds)
        self.seconds, self.sandbox, self.what = seconds, sandbox, what

    def __enter__(self) -> Any:
        return self.scope.__enter__()

    def __exit__(self, *exc_info: Any) -> bool | None:
        try:
            return self.scope.__exit__(*exc_info)
        except TimeoutError:
            raise InfrastructureError(
                f"ray backend: sandbox {self.sandbox.id} did not {self.what} within {self.seconds:g}s"
            ) from None
