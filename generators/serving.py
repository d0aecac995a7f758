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
import functools
import itertools
import logging
import multiprocessing
import os
import pickle
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from pathlib import Path
from typing import BinaryIO, Protocol

from generators.live import LiveImage, SafetyConfig
from generators.registry import ModelSpec

log = logging.getLogger(__name__)
PARENT_CHECK_S = 1.0
_LENGTH = struct.Struct("!Q")  # an answer's length, before its pickle in the worker's answer pipe


@dataclass(frozen=True)
class Served:
    """A model's answer (``image``) with when the app submitted the request and received the answer (unix time)."""

    image: LiveImage
    submitted: float
    received: float
    serving: str  # embedded | ray
    arrived: float = 0.0  # when the answer reached the app's process, if known apart from ``received``

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

    @property
    def overhead_parts(self) -> dict[str, float]:
        """:attr:`overhead` in its parts (seconds): ``request`` (from submitting to the model's start, less the wait
        and the loading: the request's way to the worker and its waking), ``encode`` (the PNG, after the model's
        seconds), ``answer`` (the answer's way back into the app's process) and ``loop`` (from there until the app's
        event loop resumed the awaiting code); ``answer`` and ``loop`` are one, in ``answer``, where the arrival is
        not seen apart."""
        image = self.image
        sent = image.sent or image.ended
        arrived = self.arrived or self.received
        return {"request": image.started - self.submitted - self.waited - image.load_seconds,
                "encode": sent - image.ended, "answer": arrived - sent, "loop": self.received - arrived}


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
    ``None`` request. A CPU worker runs torch on one thread (:func:`cpu_threads`).

    ``requests`` is the worker's queue; ``answers`` the sending end of its pipe to the app, written here, on the
    worker's one thread, the moment an answer is made (through a queue's feeder thread, the answer waited for the
    interpreter while the next image was being made: 41 ms at p95 on the loaded 2-core machine)."""
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
        try:
            _send_answer(answers, (request.request_id, replace(image, sent=time.time())))
        except OSError:  # the app is gone
            return
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


class _AnswerReader(asyncio.Protocol):
    """A worker's answer pipe, read on the event loop: each answer (its length, then its pickle: :func:`_send_answer`)
    goes to ``deliver`` with the time it was whole here; the pipe's end (the worker ended) to ``ended``."""

    def __init__(self, deliver, ended):
        self.deliver, self.ended = deliver, ended
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(self.buffer)
            end = _LENGTH.size + size
            if len(self.buffer) < end:
                return
            answer = pickle.loads(self.buffer[_LENGTH.size:end])
            del self.buffer[:end]
            self.deliver(answer, time.time())

    def eof_received(self) -> bool:
        self.ended()
        return False  # the transport closes itself


@dataclass
class _Reading:
    """Where ``worker``'s answers are read: the event loop, its transport (None until connected) and the file it
    reads (a duplicate of the pipe's end, so that a transport closing closes only its own)."""

    loop: asyncio.AbstractEventLoop
    worker: _Worker
    transport: asyncio.ReadTransport | None = None
    file: BinaryIO | None = None  # set with the transport
    stopped: bool = False

    def stop(self) -> None:
        """Stop reading, from any thread: on the loop's own (now, or soon where another thread runs it)."""
        self.stopped = True
        if self.transport is None:
            return  # the connection under way closes itself when it sees ``stopped``
        if self.loop.is_closed():
            assert self.file is not None  # set with the transport
            self.file.close()
        elif self.loop.is_running() and _running_loop() is not self.loop:
            self.loop.call_soon_threadsafe(self.transport.close)
        else:
            self.transport.close()


class _Worker:
    def __init__(self, index: int, device: str):
        self.index, self.device = index, device
        self.process: BaseProcess | None = None
        self.requests: Queue | None = None  # its queue (a put never blocks the app: the queue's thread writes it)
        self.answers: Connection | None = None  # the app's end of its answer pipe
        self.reading: _Reading | None = None
        self.resident: OrderedDict[str, None] = OrderedDict()  # what the worker holds, as the app last sent it
        self.pending: dict[int, asyncio.Future] = {}


class EmbeddedService:
    """Worker processes beside the app (module docstring). ``specs``: the models it serves by name; ``registry``:
    where a cascade finds its stages.

    A request goes to its worker through the worker's queue; the answer comes back through the worker's pipe, which
    the app's event loop reads itself (``connect_read_pipe``): its future is settled the moment the loop is free, with
    no thread between (a reader thread handing it to the loop cost another wake-up and the interpreter's lock: 13 ms
    at p95 on the loaded 2-core machine). A worker's pipe ending (the worker died) fails its requests in flight at
    once. One event loop reads the answers at a time (the app's; a test's ``asyncio.run`` after another's is fine)."""

    serving = "embedded"

    def __init__(self, specs: Mapping[str, ModelSpec], *, registry: Mapping[str, ModelSpec] | None = None,
                 devices: list[str] | None = None, resident: int = 0, cache_dir: str | Path = ".cache",
                 safety: SafetyConfig = SafetyConfig()):
        self.specs = dict(specs)
        self.registry = dict(registry or specs)
        self.resident, self.cache_dir, self.safety = resident, str(cache_dir), safety
        self._context = multiprocessing.get_context("spawn")
        self._workers = [_Worker(index, device) for index, device in enumerate(devices or default_devices())]
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = False

    def models(self) -> list[str]:
        return sorted(self.specs)

    def devices(self) -> list[str]:
        return [worker.device for worker in self._workers]

    def _start(self, worker: _Worker) -> list[asyncio.Future]:
        """Start ``worker``'s process (call with the lock held); returns the requests in flight of the process it
        replaces, to fail."""
        orphans = self._retire(worker)
        worker.requests = self._context.Queue()
        worker.answers, sending = self._context.Pipe(duplex=False)
        config = WorkerConfig(self.specs, self.registry, worker.device, self.limit(worker), self.cache_dir,
                              self.safety, os.getpid())
        worker.process = self._context.Process(target=worker_main, args=(config, worker.requests, sending),
                                               name=f"arena-generation-{worker.device}", daemon=True)
        worker.process.start()
        sending.close()  # the worker holds the only other end: when it ends, the app reads the pipe's end
        worker.resident.clear()
        return orphans

    def _retire(self, worker: _Worker) -> list[asyncio.Future]:
        """Stop reading ``worker``'s pipe and forget its process (call with the lock held); returns its requests in
        flight."""
        if worker.reading is not None:
            worker.reading.stop()
        if worker.answers is not None:
            worker.answers.close()
        worker.answers, worker.reading, worker.process = None, None, None
        orphans = list(worker.pending.values())
        worker.pending.clear()
        return orphans

    def limit(self, worker: _Worker) -> int:
        """How many models ``worker`` keeps loaded: ``resident``, or (0) one on a GPU and all on the CPU."""
        return self.resident or (1 if worker.device.startswith("cuda") else max(1, len(self.specs)))

    def _choose(self, model: str) -> _Worker:
        holding = [worker for worker in self._workers if model in worker.resident]
        return min(holding or self._workers, key=lambda worker: (len(worker.pending), worker.index))

    def submit(self, model: str, prompt: str, seed: int,
               loop: asyncio.AbstractEventLoop) -> tuple[asyncio.Future, _Reading | None]:
        """Send the request to a worker (call on ``loop``): (its future, resolved on ``loop`` with (the
        :class:`LiveImage`, when its answer reached this process); the worker's pipe to start reading on ``loop``,
        where nothing reads it there yet (:meth:`_read`))."""
        if model not in self.specs:
            raise KeyError(f"model {model!r} is not served here; served: {', '.join(self.models())}.")
        future = loop.create_future()
        orphans: list[asyncio.Future] = []
        with self._lock:
            if self._closed:
                raise RuntimeError("the generation service is closed.")
            worker = self._choose(model)
            if worker.process is None or not worker.process.is_alive():
                orphans = self._start(worker)
            start_reading = None
            if worker.reading is None or worker.reading.loop is not loop:
                if worker.reading is not None:
                    if worker.reading.loop.is_running():
                        raise RuntimeError("the embedded generation service answers one event loop at a time; "
                                           "another one is reading its answers.")
                    worker.reading.stop()
                worker.reading = start_reading = _Reading(loop, worker)
            request_id = next(self._ids)
            worker.pending[request_id] = future
            worker.resident.pop(model, None)
            worker.resident[model] = None
            while len(worker.resident) > self.limit(worker):
                worker.resident.popitem(last=False)
            assert worker.requests is not None  # made with the process (_start)
            worker.requests.put(Request(request_id, model, prompt, seed))
        for orphan in orphans:
            _fail(orphan, "the generation worker stopped")
        return future, start_reading

    async def _read(self, reading: _Reading) -> None:
        """Read the answers of ``reading.worker`` on this loop from now on."""
        worker = reading.worker
        answers = worker.answers
        if reading.stopped or answers is None:  # the service closed meanwhile, or retired the process
            return
        file = os.fdopen(os.dup(answers.fileno()), "rb", buffering=0)
        deliver, ended = functools.partial(self._answered, worker), functools.partial(self._stopped, worker, reading)
        transport, _ = await reading.loop.connect_read_pipe(lambda: _AnswerReader(deliver, ended), file)
        reading.transport, reading.file = transport, file
        if reading.stopped:  # retired while connecting
            transport.close()

    async def generate(self, model: str, prompt: str, seed: int) -> Served:
        submitted = time.time()
        future, start_reading = self.submit(model, prompt, seed, asyncio.get_running_loop())
        if start_reading is not None:
            await self._read(start_reading)
        image, arrived = await future
        return Served(image, submitted, time.time(), self.serving, arrived)

    def _answered(self, worker: _Worker, answer: tuple[int, LiveImage], arrived: float) -> None:
        request_id, image = answer
        with self._lock:
            future = worker.pending.pop(request_id, None)
        if future is not None:
            _settle(future, (image, arrived))

    def _stopped(self, worker: _Worker, reading: _Reading) -> None:
        """``worker``'s process ended (its pipe did): fail its requests in flight; the next request starts it again."""
        with self._lock:
            if worker.reading is not reading:  # replaced already (a new process, another loop)
                return
            process = worker.process
            orphans = self._retire(worker)
            closed = self._closed
        if closed or process is None:
            return
        process.join(timeout=1.0)  # ended already: its exit code
        code = process.exitcode
        log.error("the generation worker on %s stopped (exit code %s); %d request(s) failed", worker.device, code,
                  len(orphans))
        for future in orphans:
            _fail(future, f"the generation worker stopped (exit code {code})")

    def close(self) -> None:
        """Stop the workers (each finishes its current image) and stop reading their answers."""
        with self._lock:
            self._closed = True
            running = [(worker, worker.process, worker.requests) for worker in self._workers
                       if worker.process is not None and worker.requests is not None]
            for _, _, requests in running:
                requests.put(None)
        for _, process, _ in running:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
        with self._lock:
            for worker, _, _ in running:
                self._retire(worker)


def _send_answer(pipe, answer: tuple[int, LiveImage]) -> None:
    """Write ``answer`` whole into the worker's end of its answer pipe (a multiprocessing Connection): its pickle's
    length, then the pickle, as :class:`_AnswerReader` reads them."""
    data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(pipe.fileno(), view):]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _settle(future: asyncio.Future, answer: tuple[LiveImage, float]) -> None:
    if not future.done() and not future.get_loop().is_closed():  # one the app stopped waiting for is dropped
        future.set_result(answer)


def _fail(future: asyncio.Future, reason: str) -> None:
    if not future.done() and not future.get_loop().is_closed():
        future.set_exception(RuntimeError(reason))
