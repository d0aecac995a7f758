"""Open prompts on a Ray cluster: one Ray Serve deployment per model, the app only submits and awaits.

:func:`deploy` (``python -m generators ray-deploy``) puts each model of the registry on the cluster at
``ARENA_RAY_ADDRESS`` as a Ray Serve application of its own (``arena-live-<model>``) with one deployment holding a
:class:`generators.live.LiveModel` per replica. Placement and scaling come from the registry (:class:`ModelSpec`):
``serve_gpus`` GPUs per replica (a fraction puts several replicas on one GPU), between ``serve_min_replicas`` and
``serve_max_replicas`` replicas, and Ray Serve's autoscaler adds replicas when the requests per replica, queued ones
included, pass ``serve_target_queue`` (``target_ongoing_requests``). Queueing, placement and scaling are Ray's.

Each replica holds up to ``serve_replica_queue`` requests (``max_ongoing_requests``) and makes them one at a time,
in the order they came (:class:`LiveDeployment`): Ray's router sends every request at once to the replica holding
fewest, and the next one starts the moment the last ends. A replica that took only the request it was making
(``max_ongoing_requests = 1``) left the others in the app's router, which finds room by polling with a backoff that
grows to 0.5 s: on the loaded 2-core machine a request then started 376 ms (p95) after its replica was free. No HTTP
proxy runs (``proxy_location = "Disabled"``): the app calls the deployments through their handles only.

:class:`RayService` is the app's side: it connects to the cluster, looks up each model's deployment handle and awaits
``handle.generate.remote(prompt, seed)``, which answers the same :class:`generators.live.LiveImage` the embedded
workers do. Every node needs the arena package and its ``gen`` extra installed (``pip install '.[gen,ray]'``), so
the replicas import the same code.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from generators.live import LiveImage, SafetyConfig
from generators.registry import ModelSpec
from generators.serving import Served

log = logging.getLogger(__name__)
APP_PREFIX = "arena-live-"
# the replica's code runs on its main event loop, and the handle's router on the app's: one hand-over between threads
# fewer each way (Ray Serve runs both on threads of their own by default)
REPLICA_ENV = {"RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD": "0"}
APP_ENV = {"RAY_SERVE_RUN_ROUTER_IN_SEPARATE_LOOP": "0"}


def app_name(model: str) -> str:
    return APP_PREFIX + model


class LiveDeployment:
    """The body of each model's deployment: one :class:`LiveModel` per replica, which makes one image at a time, in
    the order the requests came (one thread makes them; Ray Serve runs the replica's other work beside it)."""

    def __init__(self, spec: ModelSpec, registry: Mapping[str, ModelSpec], cache_dir: str, safety: SafetyConfig,
                 device: str = ""):
        from generators.live import LiveModel

        if not device:
            import ray

            device = "cuda" if ray.get_gpu_ids() else "cpu"
        self.model = LiveModel(spec, registry=registry, device=device, cache_dir=cache_dir, safety=safety)
        self.maker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-live")
        self.free_since = time.time()
        self.first = True

    async def generate(self, prompt: str, seed: int) -> LiveImage:
        return await asyncio.get_running_loop().run_in_executor(self.maker, self._make, prompt, seed)

    def _make(self, prompt: str, seed: int) -> LiveImage:
        image = self.model.generate(prompt, seed, free_since=self.free_since,
                                    load_seconds=self.model.load_seconds if self.first else 0.0)
        self.first = False
        self.free_since = time.time()
        return replace(image, sent=self.free_since)


def connect(address: str) -> None:
    """Join the Ray cluster at ``address`` as a client of its Serve applications (once per process)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, namespace="serve", logging_level=logging.WARNING, log_to_driver=False,
                 ignore_reinit_error=True)


def deploy(specs: Mapping[str, ModelSpec], address: str, *, registry: Mapping[str, ModelSpec] | None = None,
           cache_dir: str | Path = ".cache", safety: SafetyConfig = SafetyConfig()) -> list[str]:
    """Deploy (or update) one Serve application per model of ``specs`` on the cluster; returns their names."""
    from ray import serve

    connect(address)
    serve.start(proxy_location="Disabled")
    names = []
    for name, spec in specs.items():
        deployment = serve.deployment(
            name=name, max_ongoing_requests=spec.serve_replica_queue,
            ray_actor_options={"num_gpus": spec.serve_gpus, "num_cpus": 1, "runtime_env": {"env_vars": REPLICA_ENV}},
            autoscaling_config={"min_replicas": spec.serve_min_replicas, "max_replicas": spec.serve_max_replicas,
                                "target_ongoing_requests": spec.serve_target_queue,
                                "upscale_delay_s": 5, "downscale_delay_s": 120})(LiveDeployment)
        serve.run(deployment.bind(spec, dict(registry or specs), str(cache_dir), safety), name=app_name(name),
                  route_prefix=None, blocking=False)
        names.append(app_name(name))
    for name in specs:  # ready when each answers its status
        _wait_running(app_name(name))
    return names


def _wait_running(app: str, timeout_s: float = 600.0) -> None:
    from ray import serve

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = serve.status().applications.get(app)
        if status is not None and str(status.status).endswith("RUNNING"):
            return
        if status is not None and str(status.status).endswith("DEPLOY_FAILED"):
            raise RuntimeError(f"Ray Serve could not deploy {app}: {status.message}")
        time.sleep(0.5)
    raise TimeoutError(f"Ray Serve application {app} was not running within {timeout_s:g} s.")


class RayService:
    """The app's side of the Ray path (module docstring)."""

    serving = "ray"

    def __init__(self, address: str, models: list[str]):
        for name, value in APP_ENV.items():  # read when Ray Serve is imported
            os.environ.setdefault(name, value)
        from ray import serve

        connect(address)
        self._models = list(models)
        missing = [model for model in models if app_name(model) not in serve.status().applications]
        if missing:
            raise RuntimeError(f"the Ray cluster at {address} has no deployment of {', '.join(missing)}. Deploy them "
                               "with `python -m generators ray-deploy` (same ARENA_RAY_ADDRESS and models).")
        self.handles = {model: serve.get_deployment_handle(model, app_name=app_name(model)) for model in models}

    def models(self) -> list[str]:
        return list(self._models)

    async def generate(self, model: str, prompt: str, seed: int) -> Served:
        submitted = time.time()
        image = await self.handles[model].generate.remote(prompt, seed)
        return Served(image, submitted, time.time(), self.serving)

    def close(self) -> None:
        """Leave the cluster's deployments running (they serve other app replicas too)."""
