"""Serving open prompts: the app submits a (model, prompt, seed) and awaits the image; where it is made is this
module's business (embedded workers) or Ray Serve's (:mod:`generators.ray_serving`).

The embedded default (:class:`EmbeddedService`): one worker process per device beside the app (``spawn``ed, so the
app never imports torch), each holding at most ``resident`` models loaded (:class:`generators.live.LiveModel`): a
request for another model loads it on demand and unloads the least recently used one (an LRU policy). One model per
GPU is the default (a full-size model fills it); the tiny CPU stand-ins of the tests and the demo keep all of theirs.
A worker takes its requests one at a time, in the order sent. A request goes to a worker that holds its model (the
least busy of them), else to the least busy worker. A worker dies with the app, however the app ends (it watches its
parent, as the leaderboard worker does); a worker that dies on its own (killed for memory) fails its requests in
flight with that reason and is started again on the next request.

Both services answer :class:`Served`: the model's :class:`generators.live.LiveImage` with the times the request was
submitted and answered, from which :attr:`Served.overhead` is what the serving layer added to the model's own time
(:mod:`tools.open_prompt_load` measures it beside a bare call).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import os
import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol

from generators.live import LiveImage, SafetyConfig
from generators.registry import ModelSpec

log = logging.getLogger(__name__)
PARENT_CHECK_S = 1.0


@dataclass(frozen=True)
class Served:
    """A model's answer (``image``) with when the app submitted the request and received the answer (unix time)."""

    image: LiveImage
    submitted: float
    received: float
    serving: str  # embedded | ray

    @property
    def total(self) -> float:
        return self.received - self.submitted

    @property
    def waited(self) -> float:
        """Seconds the request waited for its worker (or replica) to finish the requests before it."""
        return max(0.0, min(self.image.free_since, self.image.started) - self.submitted)

    @property
    def overhead(self) -> float:
        """What the serving layer added: the whole wait less the model's own seconds, its loading and the time it
        waited behind other requests (transport, queues, (de)serialisation)."""
        return self.total - self.image.seconds - self.image.load_seconds - self.waited


class ImageService(Protocol):
    serving: str

    def models(self) -> list[str]: ...

    async def generate(self, model: str, prompt: str, seed: int) -> Served: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker process needs (picklable): the specs it may load, where and how many at once."""

    specs: Mapping[str, ModelSpec]
    registry: Mapping[str, ModelSpec]
    device: str
    resident: int
    cache_dir: str
    safety: SafetyConfig
    parent: int


@dataclass(frozen=True)
class Request:
    request_id: int
    model: str
    prompt: str
    seed: int


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


class ResidentModels:
    """The models one worker holds loaded, least recently used first (an LRU cache): :meth:`get` loads a model on
    demand and, to stay within ``limit``, first unloads the least recently used ones (``unload`` frees them)."""

    def __init__(self, limit: int, load, unload=None):
        self.limit, self.load, self.unload = limit, load, unload or _free
        self._loaded: OrderedDict = OrderedDict()

    @property
    def names(self) -> list[str]:
        """The loaded models, least recently used first."""
        return list(self._loaded)

    def get(self, name: str):
        """(the loaded model ``name``, whether it was loaded now)."""
        if name in self._loaded:
            self._loaded.move_to_end(name)
            return self._loaded[name], False
        while len(self._loaded) >= self.limit:
            dropped, model = self._loaded.popitem(last=False)
            self.unload(model)
            log.info("unloaded %s (least recently used)", dropped)
        model = self._loaded[name] = self.load(name)
        return model, True


def _free(model) -> None:
    """Give an unloaded model's memory back (a reference cycle may hold it; the GPU keeps its cache otherwise)."""
    import gc
    import sys

    del model
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def cpu_threads(threads: int = 1) -> None:
    """Run torch's CPU kernels on ``threads`` threads in this process (as Ray runs a one-CPU replica): on a CPU the
    tiny stand-ins' small tensors ran 2 to 10 times slower on as many threads as cores, each call waking them all."""
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)


def worker_main(config: WorkerConfig, requests, answers) -> None:
    """A worker process: load models on demand (:class:`ResidentModels`) and answer each request in turn, until a
    ``None`` request. A CPU worker runs torch on one thread (:func:`cpu_threads`)."""
    threading.Thread(target=_exit_with_parent, args=(config.parent,), daemon=True).start()
    if config.device == "cpu":
        cpu_threads()
    from generators.live import LiveModel

    classifiers: dict = {}
    resident = ResidentModels(config.resident, lambda name: LiveModel(
        config.specs[name], registry=config.registry, device=config.device, cache_dir=config.cache_dir,
        safety=config.safety, classifiers=classifiers))
    free_since = time.time()
    while True:
        request = requests.get()
        if request is None:
            return
        try:
            model, loaded_now = resident.get(request.model)
            image = model.generate(request.prompt, request.seed, free_since=free_since,
                                   load_seconds=model.load_seconds if loaded_now else 0.0)
        except Exception as error:  # noqa: BLE001 - loading failed: the answer says why
            now = time.time()
            image = LiveImage(model=request.model, status="failed", seed=request.seed, free_since=free_since,
                              started=now, ended=now,
                              reason=f"{type(error).__name__}: {' '.join(str(error).split())[:500]}")
        answers.put((request.request_id, image))
        free_since = time.time()


def default_devices(setting: str = "") -> list[str]:
    """The devices of ``setting`` (comma-separated), else every visible GPU, else the CPU."""
    named = [part.strip() for part in setting.split(",") if part.strip()]
    if named:
        return named
    try:
        import torch
    except ImportError:
        return ["cpu"]
    return [f"cuda:{index}" for index in range(torch.cuda.device_count())] or ["cpu"]


class _Worker:
    def __init__(self, index: int, device: str):
        self.index, self.device = index, device
        self.process = None
        self.requests = None
        self.resident: OrderedDict[str, None] = OrderedDict()  # what the worker holds, as the app last sent it
        self.pending: dict[int, asyncio.Future] = {}


class EmbeddedService:
    """Worker processes beside the app (module docstring). ``specs``: the models it serves by name; ``registry``:
    where a cascade finds its stages."""

    serving = "embedded"

    def __init__(self, specs: Mapping[str, ModelSpec], *, registry: Mapping[str, ModelSpec] | None = None,
                 devices: list[str] | None = None, resident: int = 0, cache_dir: str | Path = ".cache",
                 safety: SafetyConfig = SafetyConfig()):
        self.specs = dict(specs)
        self.registry = dict(registry or specs)
        self.resident, self.cache_dir, self.safety = resident, str(cache_dir), safety
        self._context = multiprocessing.get_context("spawn")
        self._answers = self._context.Queue()
        self._workers = [_Worker(index, device) for index, device in enumerate(devices or default_devices())]
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = threading.Event()
        self._reader = threading.Thread(target=self._read_answers, name="generation-answers", daemon=True)
        self._reader.start()

    def models(self) -> list[str]:
        return sorted(self.specs)

    def devices(self) -> list[str]:
        return [worker.device for worker in self._workers]

    def _start(self, worker: _Worker) -> None:
        worker.requests = self._context.Queue()
        config = WorkerConfig(self.specs, self.registry, worker.device, self.limit(worker), self.cache_dir,
                              self.safety, os.getpid())
        worker.process = self._context.Process(target=worker_main, args=(config, worker.requests, self._answers),
                                               name=f"arena-generation-{worker.device}", daemon=True)
        worker.process.start()
        worker.resident.clear()

    def limit(self, worker: _Worker) -> int:
        """How many models ``worker`` keeps loaded: ``resident``, or (0) one on a GPU and all on the CPU."""
        return self.resident or (1 if worker.device.startswith("cuda") else max(1, len(self.specs)))

    def _choose(self, model: str) -> _Worker:
        holding = [worker for worker in self._workers if model in worker.resident]
        return min(holding or self._workers, key=lambda worker: (len(worker.pending), worker.index))

    def submit(self, model: str, prompt: str, seed: int, loop: asyncio.AbstractEventLoop) -> asyncio.Future:
        """Send the request to a worker; the future is resolved (on ``loop``) with the :class:`LiveImage`."""
        if model not in self.specs:
            raise KeyError(f"model {model!r} is not served here; served: {', '.join(self.models())}.")
        future = loop.create_future()
        with self._lock:
            if self._closed.is_set():
                raise RuntimeError("the generation service is closed.")
            worker = self._choose(model)
            if worker.process is None or not worker.process.is_alive():
                self._start(worker)
            request_id = next(self._ids)
            worker.pending[request_id] = future
            worker.resident.pop(model, None)
            worker.resident[model] = None
            while len(worker.resident) > self.limit(worker):
                worker.resident.popitem(last=False)
            worker.requests.put(Request(request_id, model, prompt, seed))
        return future

    async def generate(self, model: str, prompt: str, seed: int) -> Served:
        submitted = time.time()
        image = await self.submit(model, prompt, seed, asyncio.get_running_loop())
        return Served(image, submitted, time.time(), self.serving)

    def _resolve(self, request_id: int, image: LiveImage) -> None:
        with self._lock:
            future = next((worker.pending.pop(request_id) for worker in self._workers
                           if request_id in worker.pending), None)
        if future is not None:
            future.get_loop().call_soon_threadsafe(_settle, future, image)

    def _read_answers(self) -> None:
        while not self._closed.is_set():
            try:
                request_id, image = self._answers.get(timeout=0.5)
            except queue.Empty:
                self._check_workers()
                continue
            except (EOFError, OSError):
                return
            self._resolve(request_id, image)

    def _check_workers(self) -> None:
        """Fail the requests of a worker that died on its own (it is started again by the next request)."""
        with self._lock:
            dead = [worker for worker in self._workers
                    if worker.process is not None and not worker.process.is_alive() and worker.pending]
            failed = []
            for worker in dead:
                code = worker.process.exitcode
                log.error("the generation worker on %s stopped (exit code %s); %d request(s) failed", worker.device,
                          code, len(worker.pending))
                failed += [(future, f"the generation worker stopped (exit code {code})")
                           for future in worker.pending.values()]
                worker.pending.clear()
                worker.process = None
        for future, reason in failed:
            future.get_loop().call_soon_threadsafe(_fail, future, reason)

    def close(self) -> None:
        """Stop the workers (each finishes its current image) and the answer reader."""
        with self._lock:
            self._closed.set()
            workers = [worker for worker in self._workers if worker.process is not None]
            for worker in workers:
                worker.requests.put(None)
        for worker in workers:
            worker.process.join(timeout=10)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(timeout=5)
        self._reader.join(timeout=2)


def _settle(future: asyncio.Future, image: LiveImage) -> None:
    if not future.done():  # a request the app stopped waiting for (its timeout) is dropped
        future.set_result(image)


def _fail(future: asyncio.Future, reason: str) -> None:
    if not future.done():
        future.set_exception(RuntimeError(reason))
