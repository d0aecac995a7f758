"""The server's sampler: vote counts kept vote by vote, the Bradley–Terry fit (for strategies that ``needs_fit``,
such as ``active``), and the draws.

What a strategy draws is pure maths over count tables (:mod:`sampling.strategies`, whose docstring explains the
strategies, why the fit stays valid, replication and how the counts are kept at scale); this module holds those
tables for a server (:class:`SamplingStats`) and draws the next battle's prompt and images from the database
(:func:`draw_pairing`).
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import astuple, dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from datamodel.battles import Pairing
from datamodel.connection import open_reader, reader_target
from datamodel.database import Database
from datamodel.sampling_reads import (
    catalog_version,
    pair_images,
    read_count_rows,
    vote_changes_since,
    vote_pairing,
    votes_by_id,
)
from ratings.votes import OUTCOMES
from sampling.draws import NoBattleAvailable, PromptPool, draw_uniform, seen_prompts
from sampling.strategies import (
    UNIFORM,
    FitState,
    SamplingParams,
    fit_state,
    get_strategy,
    pair_index,
    pair_probabilities,
    pair_votes,
    prompt_probabilities,
)
from sampling.warmup import warming_pairs, with_warmup

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class Replica(Pairing):
    """A :class:`~datamodel.battles.Pairing` that re-serves a battle with one human vote (for inter-annotator
    agreement).

    It is recorded under the configured strategy; the votes on it share the original's ``pair_key``.
    """


@dataclass(frozen=True)
class UniformDraw(Pairing):
    """A :class:`~datamodel.battles.Pairing` drawn by ``uniform`` where a pair-first strategy (``balanced``,
    ``active``, …) was asked for, because the sampler's counts were not read yet (start-up,
    :meth:`SamplingStats.refresh`). Record its battle under :attr:`strategy`, the one that really drew it
    (:func:`arena.session.vote` does)."""

    strategy: ClassVar[str] = UNIFORM.name


class VoteFacts(NamedTuple):
    """What the sampler counts of one vote: columns of the ``votes`` table, which never change once written."""

    vote_id: int
    voter_kind: str
    annotator_id: int | None
    prompt_id: int
    left_image_id: int
    right_image_id: int
    left_model_id: int
    right_model_id: int
    outcome: str


def vote_facts(db: Database, vote_ids) -> dict[int, VoteFacts]:
    """{vote id: :class:`VoteFacts`} of the given votes (primary-key lookups, 500 ids a query)."""
    return {row[0]: VoteFacts(*row) for row in votes_by_id(db, vote_ids)}


def battle_key(image_a: int, image_b: int) -> int:
    """One integer per battle, i.e. per unordered pair of images (an image belongs to one prompt, so the pair also
    fixes the prompt): ``min << 32 | max``. Image ids must be below 2³¹."""
    low, high = (image_a, image_b) if image_a < image_b else (image_b, image_a)
    return (int(low) << 32) | int(high)


class BattleCounts:
    """Non-excluded human votes per battle (:func:`battle_key`), for :func:`draw_replica`.

    Per battle (a row): ``count`` votes, the sum of their vote ids and the sum of their annotators' ids (so a battle
    with exactly one vote names that vote and its annotator without a query), the code of its prompt's suite
    (−1 for a prompt the tables do not know) and the prompt's row in the tables (−1: unknown). Votes are added and
    removed with :meth:`add` (O(log n): rows are found through a sorted index of the rows that existed at the last
    re-index, plus a dict of the rows added since, re-indexed when it reaches an eighth of the table); about 55 bytes
    per battle. The battles with exactly one vote (the *candidates*) are counted per suite and annotator, and per
    prompt, so a draw knows at once whether there is one to show (also to an annotator who saw most prompts).

    Not thread-safe: :class:`SamplingStats` holds its lock around every call.
    """

    BATCH = 1024  # rows tried at once by pick
    ROUNDS = 4  # batches tried before an exact pass over the rows

    def __init__(self, keys=(), counts=(), id_sums=(), annotator_sums=(), suites=(), prompts=None):
        size = len(keys)
        capacity = max(1024, size + size // 8)
        self.size = size
        self.keys = np.zeros(capacity, dtype=np.int64)
        self.counts = np.zeros(capacity, dtype=np.int64)
        self.id_sums = np.zeros(capacity, dtype=np.int64)
        self.annotator_sums = np.zeros(capacity, dtype=np.int64)
        self.suites = np.zeros(capacity, dtype=np.int16)
        self.prompts = np.full(capacity, -1, dtype=np.int32)
        for column, values in ((self.keys, keys), (self.counts, counts), (self.id_sums, id_sums),
                               (self.annotator_sums, annotator_sums), (self.suites, suites),
                               (self.prompts, -1 if prompts is None else prompts)):
            column[:size] = values
        self._reindex()
        self._by_suite_annotator: Counter = Counter()
        self._by_suite: Counter = Counter()
        self._by_annotator: Counter = Counter()
        self.candidates = 0
        single = self.counts[:size] == 1
        known = self.prompts[:size][single]
        self._by_prompt = np.bincount(known[known >= 0], minlength=1024).astype(np.int64)  # candidates per prompt row
        if single.any():
            pairs, number = np.unique(np.stack([self.suites[:size][single], self.annotator_sums[:size][single]]),
                                      axis=1, return_counts=True)
            for suite, annotator, n in zip(pairs[0].tolist(), pairs[1].tolist(), number.tolist()):
                self._tally(suite, annotator, n)

    def _reindex(self) -> None:
        order = np.argsort(self.keys[:self.size], kind="stable")
        self._index_keys, self._index_rows = self.keys[:self.size][order], order
        self._recent: dict[int, int] = {}

    def _tally(self, suite: int, annotator: int, n: int, prompt: int = -1) -> None:
        self._by_suite_annotator[(suite, annotator)] += n
        self._by_suite[suite] += n
        self._by_annotator[annotator] += n
        self.candidates += n
        if prompt >= 0:
            if prompt >= len(self._by_prompt):
                self._by_prompt = np.concatenate([self._by_prompt, np.zeros(prompt + 1, dtype=np.int64)])
            self._by_prompt[prompt] += n

    def _row(self, key: int) -> int | None:
        i = int(np.searchsorted(self._index_keys, key))
        if i < len(self._index_keys) and self._index_keys[i] == key:
            return int(self._index_rows[i])
        return self._recent.get(key)

    def _append(self, key: int, suite: int, prompt: int) -> int:
        if self.size == len(self.keys):
            for name in ("keys", "counts", "id_sums", "annotator_sums", "suites", "prompts"):
                old = getattr(self, name)
                grown = np.zeros(2 * len(old), dtype=old.dtype)
                grown[:len(old)] = old
                setattr(self, name, grown)
        row = self.size
        self.keys[row], self.suites[row], self.prompts[row] = key, suite, prompt
        self.size += 1
        self._recent[key] = row
        if len(self._recent) > max(4096, self.size // 8):
            self._reindex()
        return row

    def add(self, key: int, suite: int, vote_id: int, annotator_id: int | None, sign: int, prompt: int = -1) -> None:
        """Count (``sign`` = 1) or uncount (−1) one vote on the battle ``key`` of a prompt of suite code ``suite`` (and
        row ``prompt`` in the tables, −1 if unknown)."""
        row = self._row(key)
        if row is None:
            row = self._append(key, suite, prompt)
        if self.counts[row] == 1:
            self._tally(int(self.suites[row]), int(self.annotator_sums[row]), -1, int(self.prompts[row]))
        self.counts[row] += sign
        self.id_sums[row] += sign * vote_id
        self.annotator_sums[row] += sign * (annotator_id or 0)
        if self.counts[row] == 1:
            self._tally(int(self.suites[row]), int(self.annotator_sums[row]), 1, int(self.prompts[row]))

    def available(self, suite: int | None = None, annotator_id: int | None = None) -> int:
        """How many candidates (battles with one vote) are in ``suite`` (a code; None: all) and not by
        ``annotator_id``."""
        total = self.candidates if suite is None else self._by_suite[suite]
        if annotator_id is None:
            return total
        own = self._by_annotator[annotator_id] if suite is None else self._by_suite_annotator[(suite, annotator_id)]
        return total - own

    def pick(self, gen: np.random.Generator, suite: int | None = None, annotator_id: int | None = None,
             blocked: np.ndarray | None = None) -> int | None:
        """The vote id of a candidate in ``suite`` not by ``annotator_id`` and not of a prompt whose row is True in
        ``blocked`` (one entry per prompt row, and a last False one for unknown prompts; only rows of ``suite``),
        uniformly, or None if there is none.

        Rejection sampling over the rows (every battle ever voted on since the last full read), ``BATCH`` rows at a
        time: the first row of a batch that qualifies is uniform over the qualifying rows. When the candidates are so
        rare that ``ROUNDS`` batches would likely miss (or do miss), one exact pass over the rows (numpy, in memory)
        picks one uniformly instead. Either way the choice is exactly uniform over the candidates.
        """
        wanted = self.available(suite, annotator_id)
        if blocked is not None and wanted > 0:  # at most the candidates of the prompts not blocked
            rows = np.flatnonzero(blocked[:-1])
            rows = rows[rows < len(self._by_prompt)]
            total = self.candidates if suite is None else self._by_suite[suite]
            wanted = min(wanted, total - int(self._by_prompt[rows].sum()))
        if wanted <= 0:
            return None

        def qualifies(rows):
            ok = self.counts[rows] == 1
            if suite is not None:
                ok &= self.suites[rows] == suite
            if annotator_id is not None:
                ok &= self.annotator_sums[rows] != annotator_id
            if blocked is not None:
                ok &= ~blocked[self.prompts[rows]]
            return ok

        if wanted * self.BATCH * self.ROUNDS >= 4 * self.size:  # P(miss) <= e^-4 for all the rounds together
            for _ in range(self.ROUNDS):
                rows = gen.integers(0, self.size, self.BATCH)
                hits = rows[qualifies(rows)]
                if hits.size:
                    return int(self.id_sums[hits[0]])
        rows = np.flatnonzero(qualifies(np.arange(self.size)))
        return int(self.id_sums[rows[gen.integers(rows.size)]]) if rows.size else None

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (the dict of recent rows aside)."""
        return sum(a.nbytes for a in (self.keys, self.counts, self.id_sums, self.annotator_sums, self.suites,
                                      self.prompts, self._index_keys, self._index_rows))

    def as_dict(self) -> dict[int, tuple[int, int, int]]:
        """{battle key: (votes, sum of vote ids, sum of annotator ids)} of the battles with votes (for tests)."""
        live = np.flatnonzero((self.counts[:self.size] != 0) | (self.id_sums[:self.size] != 0))
        return {int(self.keys[r]): (int(self.counts[r]), int(self.id_sums[r]), int(self.annotator_sums[r]))
                for r in live}


@dataclass(eq=False)
class CountTables:
    """What the sampler knows about the database, as arrays (model index = position in ``model_ids``).

    ``has_image[p, m]``: prompt ``prompt_ids[p]`` has an image of model ``model_ids[m]``. ``counts`` (n, n, 4): votes
    by displayed positions and outcome (:mod:`ratings.votes`); ``pair_counts`` (K,): votes per pair;
    ``prompt_pair_counts`` (prompts, K) and ``prompt_counts`` (prompts,): votes per prompt and pair, per prompt;
    ``battles``: votes per battle (:class:`BattleCounts`). Only the votes of one voter kind that are not excluded
    count. ``data_version`` and ``catalog_version`` are the ``data_versions`` counters the tables were read at,
    ``change_seq`` the last row of ``vote_changes`` they include (:meth:`SamplingStats.catch_up` moves it on).

    :class:`SamplingStats` changes the count arrays in place (:meth:`add`), under its lock.
    """

    model_ids: tuple[int, ...]
    prompt_ids: np.ndarray
    prompt_suites: np.ndarray
    has_image: np.ndarray
    counts: np.ndarray
    pair_counts: np.ndarray
    prompt_pair_counts: np.ndarray
    prompt_counts: np.ndarray
    battles: BattleCounts = field(default_factory=BattleCounts)
    data_version: int = 0
    catalog_version: int = 0
    change_seq: int = 0

    def __post_init__(self):
        n = len(self.model_ids)
        self.model_index = {model_id: m for m, model_id in enumerate(self.model_ids)}
        self.prompt_index = {prompt_id: p for p, prompt_id in enumerate(self.prompt_ids.tolist())}
        self.position = np.full((n, n), -1, dtype=np.int64)
        i, j = pair_index(n)
        self.position[i, j] = self.position[j, i] = np.arange(len(i))
        self.suite_names = tuple(sorted(set(self.prompt_suites.tolist())))
        self.suite_codes = {suite: code for code, suite in enumerate(self.suite_names)}
        self.prompt_suite_codes = np.array([self.suite_codes[s] for s in self.prompt_suites.tolist()], dtype=np.int16)
        self._scopes: dict[str | None, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def votes(self) -> int:
        """Votes counted (battles drawn but not voted on are not votes)."""
        return int(self.counts.sum())

    def pair(self, model_a: int, model_b: int) -> int | None:
        """The pair index of two model ids, or None (an unknown model, or twice the same)."""
        a, b = self.model_index.get(model_a), self.model_index.get(model_b)
        return None if a is None or b is None or a == b else int(self.position[a, b])

    def scope(self, suite: str | None) -> tuple[np.ndarray, np.ndarray]:
        """(``eligible`` prompts (of ``suite``) with images of two models, ``available`` pairs (K,) that share one)."""
        if suite in self._scopes:
            return self._scopes[suite]
        eligible = self.has_image.sum(axis=1) >= 2
        if suite:
            eligible &= self.prompt_suites == suite
        cover = self.has_image[eligible].astype(np.int64)
        shared = cover.T @ cover  # prompts shared by each pair of models
        i, j = pair_index(len(self.model_ids))
        scope = (eligible, shared[i, j] > 0)
        if suite is None or suite in self.suite_codes:  # only real suites are kept
            self._scopes[suite] = scope
        return scope

    def pairs_sharing(self, rows: np.ndarray) -> np.ndarray:
        """Which pairs (K,) have images of both models for at least one of the prompts ``rows`` (a boolean mask)."""
        cover = self.has_image[rows].astype(np.float32)
        i, j = pair_index(len(self.model_ids))
        return (cover.T @ cover)[i, j] > 0

    def rows_of(self, prompt_ids: np.ndarray) -> np.ndarray:
        """The rows of those ``prompt_ids`` that the tables hold (the others are left out)."""
        prompt_ids = np.asarray(prompt_ids, dtype=np.int64)
        if not len(self.prompt_ids):
            return np.zeros(0, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.prompt_ids, prompt_ids), len(self.prompt_ids) - 1)
        return at[self.prompt_ids[at] == prompt_ids]

    def add(self, vote: VoteFacts, sign: int) -> None:
        """Count (``sign`` = 1) or uncount (−1) one vote. A vote of a model or prompt read after these tables only
        counts for its battle (the full read that a catalog change starts counts it everywhere)."""
        k = self.pair(vote.left_model_id, vote.right_model_id)
        p = self.prompt_index.get(vote.prompt_id)
        if k is not None:
            a, b = self.model_index[vote.left_model_id], self.model_index[vote.right_model_id]
            self.counts[a, b, OUTCOMES.index(vote.outcome)] += sign
            self.pair_counts[k] += sign
            if p is not None:
                self.prompt_pair_counts[p, k] += sign
                self.prompt_counts[p] += sign
        suite = int(self.prompt_suite_codes[p]) if p is not None else -1
        self.battles.add(battle_key(vote.left_image_id, vote.right_image_id), suite, vote.vote_id,
                         vote.annotator_id, sign, -1 if p is None else p)


def read_count_tables(db: Database, *, voter_kind: str = "human") -> CountTables:
    """Read models, prompts with images and the vote counts from the database, in one read transaction.

    The votes are aggregated in SQL, per battle, from the ``votes`` table alone (it records what each battle showed,
    :func:`datamodel.schema._study_scale`): one pass over the votes (about 2 s per million), then numpy
    (:func:`datamodel.sampling_reads.read_count_rows`).
    """
    read = read_count_rows(db, voter_kind)
    versions, model_ids, prompts, images, votes = read.versions, read.model_ids, read.prompts, read.images, read.battles
    prompt_ids = np.array([row[0] for row in prompts], dtype=np.int64)
    prompt_suites = np.array([row[1] for row in prompts], dtype=object)
    n, n_prompts, k = len(model_ids), len(prompt_ids), len(model_ids) * (len(model_ids) - 1) // 2
    model_index = {model_id: m for m, model_id in enumerate(model_ids)}
    prompt_index = {prompt_id: p for p, prompt_id in enumerate(prompt_ids.tolist())}
    has_image = np.zeros((n_prompts, n), dtype=bool)
    for prompt_id, model_id in images:
        has_image[prompt_index[prompt_id], model_index[model_id]] = True
    low, high, prompt, model_low, model_high, count, id_sum, annotator_sum = votes[:, :8].T
    by_outcome = votes[:, 8:].reshape(-1, len(OUTCOMES), 2)  # [battle, outcome, 0: low image shown left / 1: right]

    def index_of(ids, mapping):
        lookup = np.full(max(max(mapping, default=0), int(ids.max(initial=0))) + 1, -1, dtype=np.int64)
        lookup[list(mapping)] = list(mapping.values())
        return lookup[ids]

    a, b, p = index_of(model_low, model_index), index_of(model_high, model_index), index_of(prompt, prompt_index)
    counts = np.zeros((n, n, len(OUTCOMES)), dtype=np.int64)
    prompt_pair_counts = np.zeros((n_prompts, k), dtype=np.int64)
    pair = (a >= 0) & (b >= 0) & (a != b)
    outcomes = np.arange(len(OUTCOMES))[None, :]
    np.add.at(counts, (a[pair, None], b[pair, None], outcomes), by_outcome[pair, :, 0])
    np.add.at(counts, (b[pair, None], a[pair, None], outcomes), by_outcome[pair, :, 1])
    position = np.full((n, n), -1, dtype=np.int64)
    i, j = pair_index(n)
    position[i, j] = position[j, i] = np.arange(k)
    placed = pair & (p >= 0)
    np.add.at(prompt_pair_counts, (p[placed], position[a[placed], b[placed]]), count[placed])
    suite_of_prompt = {suite: code for code, suite in enumerate(sorted(set(prompt_suites.tolist())))}
    prompt_codes = np.array([suite_of_prompt[s] for s in prompt_suites.tolist()] + [-1], dtype=np.int16)
    if len(high) and int(high.max()) >= 2**31:
        raise ValueError("Image ids of 2^31 and more do not fit the sampler's battle keys "
                         "(sampling.sampler.battle_key).")
    battles = BattleCounts((low << 32) | high, count, id_sum, annotator_sum, prompt_codes[p], p)
    return CountTables(model_ids, prompt_ids, prompt_suites, has_image, counts, pair_votes(counts),
                       prompt_pair_counts, prompt_pair_counts.sum(axis=1), battles,
                       data_version=int(versions.get("votes", 0)), catalog_version=int(versions.get("catalog", 0)),
                       change_seq=read.change_seq)


class SamplingStats:
    """Vote counts and the ``active`` strategy's Bradley–Terry state for one server (its context holds one), kept
    up to date vote by vote; the web server's threads share it.

    - **Counts.** :meth:`refresh` starts the one full read (:func:`read_count_tables`) on first use (or call
      :meth:`start` at start-up); it runs on a background thread with its own connection (on the calling thread for
      an in-memory database). After that the counts change only through :meth:`catch_up`: it reads the rows of
      ``vote_changes`` after the last one counted (:func:`datamodel.schema._vote_changes`: every vote that starts
      or stops counting, in commit order, written by triggers) and applies them. :meth:`note_vote`, which every
      human vote recorded by :func:`arena.session.vote` calls after its commit, catches up at once (the vote, and
      each earlier vote whose ``excluded`` flag the quality rules flipped with it); :meth:`refresh`, before every
      draw, at most every ``sync_seconds``. So the counts equal a full re-read of the votes, exactly, whichever
      process recorded them: with several app replicas on one database, each replica's draws count the others'
      votes committed more than ``sync_seconds`` (1 s) earlier, and its own at once.
    - **Full re-reads** happen only at start-up, when an admin includes or excludes a vote (:meth:`reload`, from the
      admin tab) and when models, prompts or images change (the ``catalog`` counter of ``data_versions``, checked at
      most every ``refresh_seconds`` by :meth:`refresh`; an open prompt's prompt and images, never drawn, leave it
      alone: its vote is counted as any other); always on the background thread, draws using the previous
      counts meanwhile. A read includes ``vote_changes`` up to a row it records (``change_seq``, read in the same
      snapshot); the changes after it are caught up as soon as the new tables are in place.
    - **Start-up.** Until the first full read is done, :meth:`refresh` waits for it up to ``startup_wait_seconds``;
      if it is still running, :func:`draw_pairing` draws that battle by ``uniform`` and says so (:class:`UniformDraw`,
      recorded as ``uniform``), and a replica draw is skipped.
    - **In flight.** :meth:`note_served` counts a battle just drawn (its prompt and pair) until its vote arrives
      (:meth:`note_vote` releases one in-flight battle of the same prompt and pair) or ``in_flight_seconds`` pass,
      so concurrent draws spread out while a skipped battle stops counting soon; these tallies are added to the vote
      counts at draw time, never stored in them.
    - **Refit.** The Bradley–Terry state is refitted when ``refit_votes`` counted votes changed since the last fit or
      ``refit_seconds`` passed with changes (:func:`fit_state`: one Newton fit and one n×n inverse, about a
      millisecond for 12 models) on the calling thread, i.e. when a battle is drawn, never when a vote is recorded; a
      thread that finds another one refitting does not wait and draws with the previous state.
    - **Threads.** One lock guards the count arrays and the in-flight tallies; draws hold it only to copy the K pair
      counts and, for the chosen pair, the counts of its prompts, or to pick a replica; votes to add a few counts.
      ``state`` is immutable and replaced whole.
    - The counts and the fit cover every suite (votes of ``voter_kind``, not excluded); a suite filter at draw time
      only narrows the prompts, and with them the pairs that can be shown.
    """

    def __init__(
        self,
        params: SamplingParams | None = None,
        *,
        refresh_seconds: float = 2.0,
        sync_seconds: float = 1.0,
        refit_votes: int = 50,
        refit_seconds: float = 60.0,
        in_flight_seconds: float = 60.0,
        startup_wait_seconds: float = 5.0,
        voter_kind: str = "human",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.params = params or SamplingParams()
        self.refresh_seconds = refresh_seconds
        self.sync_seconds = sync_seconds
        self.refit_votes = refit_votes
        self.refit_seconds = refit_seconds
        self.in_flight_seconds = in_flight_seconds
        self.startup_wait_seconds = startup_wait_seconds
        self.voter_kind = voter_kind
        self.clock = clock
        self.tables: CountTables | None = None
        self.state: FitState | None = None
        self.refitted_at = -math.inf
        self.load_error: BaseException | None = None
        self._lock = threading.Lock()
        self._refit_lock = threading.Lock()
        self._load_lock = threading.Lock()  # one full read at a time
        self._started = False
        self._loading = False  # a background full read runs
        self._loader: threading.Thread | None = None
        self._again = False  # a full read was asked for while one ran: read again after it
        self._synced_at = -math.inf  # when catch_up last ran from refresh
        self._changes = 0  # counted votes changed so far (for the refit schedule)
        self._fitted_changes = 0
        self._catalog_checked_at = -math.inf
        self._flight_queue: deque = deque()  # (expires at, (prompt id, model id, model id)), oldest first
        self._flight_live: Counter = Counter()  # in flight per (prompt id, model id, model id)
        self._flight_released: Counter = Counter()  # released by a vote, still in the queue
        self._flight_pair = np.zeros(0)
        self._flight_prompt = np.zeros(0)
        self._flight_prompt_pair: dict[int, Counter] = {}  # pair index -> {prompt row: in flight}

    # -- full reads

    @property
    def ready(self) -> bool:
        """Whether the first full read is done (draws can use the counts)."""
        return self.tables is not None

    def start(self, db: Database) -> SamplingStats:
        """Start the first full read (in the background for a database file), if not started yet; returns ``self``."""
        if not self._started:
            self._load(db, wait=False)
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background full read, if one runs (up to ``timeout`` seconds); True if none runs now."""
        loader = self._loader
        if loader is not None:
            loader.join(timeout)
        return not self._loading

    def reload(self, db: Database) -> None:
        """Read everything again in the background (after an admin review); nothing to do if not started yet."""
        if self._started:
            self._load(db, wait=False)

    def _load(self, db, *, wait: bool) -> None:
        """A full read: on this thread if ``wait`` or in memory, else on the background thread (once more after the
        running one, if one runs)."""
        target = None if wait else reader_target(db)
        with self._lock:
            self._started = True
            if target is not None:
                if self._loading:
                    self._again = True
                    return
                self._loading = True
                self._loader = threading.Thread(target=self._read_in_background, args=(target,), daemon=True,
                                                name="sampling-stats-read")
                self._loader.start()
                return
        self._read(db, background=False)

    def _read_in_background(self, target: str) -> None:
        try:
            reader = open_reader(target)
        except Exception as error:  # reported by load_error; the next refresh without counts tries again
            log.exception("The sampler could not open the database to read its counts")
            with self._lock:
                self.load_error, self._loading = error, False
            return
        try:
            self._read(reader, background=True)
        finally:
            reader.close()

    def _read(self, db, *, background: bool) -> None:
        """Full reads until none is asked for: each swaps in its snapshot, then catches up with the changes after
        it."""
        with self._load_lock:
            while True:
                with self._lock:
                    self._again = False
                try:
                    tables = read_count_tables(db, voter_kind=self.voter_kind)
                except Exception as error:
                    log.exception("The sampler could not read the vote counts")
                    with self._lock:
                        self.load_error = error
                        self._loading = self._loading and not background
                    if not background:
                        raise
                    return
                with self._lock:
                    old = self.tables
                    self.tables, self.load_error = tables, None
                    self._changes += abs(tables.votes - (old.votes if old is not None else 0))
                    self._rebuild_flight()
                self.catch_up(db)
                with self._lock:
                    if not (background and self._again):
                        self._loading = self._loading and not background
                        return

    # -- votes

    def catch_up(self, db: Database) -> list[tuple]:
        """Count the changes to the votes committed since the tables' ``change_seq`` (module docstring), by any
        process; return the rows read (:func:`datamodel.sampling_reads.vote_changes_since`). Safe from any thread:
        a row is applied once, in ``seq`` order."""
        with self._lock:
            tables = self.tables
        if tables is None:
            return []  # the first full read, still to come, counts everything committed before its snapshot
        rows = vote_changes_since(db, tables.change_seq)
        with self._lock:
            if self.tables is not tables:
                return rows  # a full read swapped in new tables meanwhile: it catches up itself
            applied = 0
            for seq, sign, vote_id, *facts in rows:
                if seq <= tables.change_seq:
                    continue  # another thread applied it
                if facts[0] == self.voter_kind:
                    tables.add(VoteFacts(vote_id, *facts), sign)
                    applied += 1
                tables.change_seq = seq
            self._changes += applied
        return rows

    def note_vote(self, db: Database, receipt) -> None:
        """Count a vote just committed (an :class:`datamodel.votes.VoteReceipt`), the flags the quality rules
        flipped with it and whatever else changed since (:meth:`catch_up`); release its battle from the in-flight
        tally.

        Call it after the vote's transaction commits, so that the counts follow committed votes only.
        """
        if not self._started:
            return  # the first full read, still to come, will count it
        rows = self.catch_up(db)
        vote = next((VoteFacts(vote_id, *facts) for _, _, vote_id, *facts in rows if vote_id == receipt.vote_id),
                    None)
        if vote is None:  # caught up by another thread, or not counted (a judge's): its battle, by primary key
            vote = vote_facts(db, [receipt.vote_id]).get(receipt.vote_id)
        if vote is not None:
            with self._lock:
                self._release((vote.prompt_id, *sorted((vote.left_model_id, vote.right_model_id))))

    # -- battles in flight

    def note_served(self, prompt_id: int, model_a: int, model_b: int) -> None:
        """Count a battle just drawn (by model ids) as in flight, until its vote or ``in_flight_seconds``."""
        key = (prompt_id, *sorted((model_a, model_b)))
        with self._lock:
            now = self.clock()
            self._expire(now)
            self._flight_queue.append((now + self.in_flight_seconds, key))
            self._flight_live[key] += 1
            self._shift_flight(key, 1)

    @property
    def in_flight(self) -> int:
        """Battles drawn and neither voted on nor expired."""
        with self._lock:
            self._expire(self.clock())
            return sum(self._flight_live.values())

    def _release(self, key) -> None:
        if self._flight_live[key] > 0:
            self._flight_live[key] -= 1
            self._flight_released[key] += 1
            self._shift_flight(key, -1)

    def _expire(self, now: float) -> None:
        while self._flight_queue and self._flight_queue[0][0] <= now:
            _, key = self._flight_queue.popleft()
            if self._flight_released[key] > 0:  # its vote came: the oldest entry of the key stands for it
                self._flight_released[key] -= 1
                if not self._flight_released[key]:
                    del self._flight_released[key]
            else:
                self._flight_live[key] -= 1
                self._shift_flight(key, -1)
            if not self._flight_live[key]:
                del self._flight_live[key]

    def _shift_flight(self, key, amount: int) -> None:
        tables = self.tables
        if tables is None:
            return
        prompt_id, model_a, model_b = key
        k = tables.pair(model_a, model_b)
        if k is None:
            return
        self._flight_pair[k] += amount
        p = tables.prompt_index.get(prompt_id)
        if p is not None:
            self._flight_prompt[p] += amount
            flying = self._flight_prompt_pair.setdefault(k, Counter())
            flying[p] += amount
            if not flying[p]:
                del flying[p]

    def _rebuild_flight(self) -> None:
        tables = self.tables
        assert tables is not None  # rebuilt after a read
        self._flight_pair = np.zeros(len(tables.pair_counts))
        self._flight_prompt = np.zeros(len(tables.prompt_ids))
        self._flight_prompt_pair = {}
        for key, amount in self._flight_live.items():
            self._shift_flight(key, amount)

    # -- what a draw reads

    def pair_counts(self, tables: CountTables) -> np.ndarray:
        """Votes plus battles in flight per pair (K,), from ``tables`` (the current ones)."""
        with self._lock:
            self._expire(self.clock())
            counts = tables.pair_counts.astype(np.float64)
            if self.tables is tables:
                counts += self._flight_pair
        return np.maximum(counts, 0.0)

    def prompt_counts(self, tables: CountTables, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(votes plus battles in flight of pair ``k`` per prompt, all votes plus in flight per prompt), for
        the prompt ``rows``."""
        with self._lock:
            per_pair = tables.prompt_pair_counts[rows, k].astype(np.float64)
            overall = tables.prompt_counts[rows].astype(np.float64)
            if self.tables is tables:
                flying = self._flight_prompt_pair.get(k)
                if flying:  # a few prompts: place them among the (sorted) rows
                    prompts = np.fromiter(flying.keys(), dtype=np.int64, count=len(flying))
                    amounts = np.fromiter(flying.values(), dtype=np.float64, count=len(flying))
                    at = np.minimum(np.searchsorted(rows, prompts), len(rows) - 1)
                    hit = rows[at] == prompts
                    np.add.at(per_pair, at[hit], amounts[hit])
                overall += self._flight_prompt[rows]
        return np.maximum(per_pair, 0.0), np.maximum(overall, 0.0)

    def pick_single_vote(self, rng: random.Random, suite: str | None = None, annotator_id: int | None = None,
                         exclude_prompts: np.ndarray | None = None) -> int | None:
        """The id of a vote alone on its battle, in ``suite``, not by ``annotator_id`` and not on one of the
        ``exclude_prompts`` (prompt ids), uniformly (:meth:`BattleCounts.pick`); None if there is none or the counts
        are not read yet."""
        with self._lock:
            tables = self.tables
            if tables is None:
                return None
            code = None
            if suite:
                code = tables.suite_codes.get(suite)
                if code is None:
                    return None
            if tables.battles.available(code, annotator_id) <= 0:
                return None
            blocked = None
            if exclude_prompts is not None and len(exclude_prompts):
                blocked = np.zeros(len(tables.prompt_ids) + 1, dtype=bool)  # the last: prompts read since
                rows = tables.rows_of(exclude_prompts)
                blocked[rows if code is None else rows[tables.prompt_suite_codes[rows] == code]] = True
            return tables.battles.pick(np.random.default_rng(rng.getrandbits(64)), code, annotator_id, blocked)

    # -- the schedule

    def refresh(self, db: Database, *, force: bool = False, fit: bool = True) -> SamplingStats:
        """Make the counts usable for a draw, cheaply; returns ``self``.

        Starts the first full read if none ran (and waits for it up to ``startup_wait_seconds``), checks at most every
        ``refresh_seconds`` whether the catalog changed (then re-reads in the background) and at most every
        ``sync_seconds`` catches up with the votes of other processes, then refits if due (and ``fit``). ``force``
        re-reads everything now, on this thread (tests and tools; never the request path).
        """
        if force:
            self._load(db, wait=True)
        elif self.tables is None:
            if not self._loading:
                self._load(db, wait=False)  # the first read, or again after a failed one
            loader = self._loader
            if loader is not None:
                loader.join(self.startup_wait_seconds)
        else:
            now = self.clock()
            if now - self._catalog_checked_at >= self.refresh_seconds:
                self._catalog_checked_at = now
                version = catalog_version(db)
                if version is not None and version != self.tables.catalog_version and not self._loading:
                    self.reload(db)
            if now - self._synced_at >= self.sync_seconds:  # the other processes' votes
                self._synced_at = now
                self.catch_up(db)
        if fit:
            self.maybe_refit(force=force)
        return self

    def refit_due(self) -> bool:
        """Whether the Bradley–Terry state is missing, or ``refit_votes`` counted votes or ``refit_seconds`` behind."""
        tables, state = self.tables, self.state
        if tables is None:
            return False
        if state is None or len(state.ratings) != len(tables.model_ids):
            return True
        changed = self._changes - self._fitted_changes
        return changed >= self.refit_votes or (changed > 0 and self.clock() - self.refitted_at >= self.refit_seconds)

    def maybe_refit(self, *, force: bool = False) -> bool:
        """Refit the Bradley–Terry state if due (or ``force``) and no other thread is at it; True if it refitted."""
        if not (force or self.refit_due()):
            return False
        if not self._refit_lock.acquire(blocking=False):
            return False
        try:
            with self._lock:
                tables, changes = self.tables, self._changes
                if tables is None:
                    return False
                counts = np.maximum(tables.counts, 0)
            state = self.state
            same_models = state is not None and len(state.theta) == len(tables.model_ids)
            fitted = fit_state(counts, params=self.params,
                               theta0=state.theta if state is not None and same_models else None)
            self.state, self.refitted_at, self._fitted_changes = fitted, self.clock(), changes
            return True
        finally:
            self._refit_lock.release()


def _choose(rng: random.Random, probabilities: np.ndarray) -> int:
    """An index drawn with ``probabilities`` from ``rng`` (one ``rng.random()`` call)."""
    cumulative = np.cumsum(probabilities)
    x = rng.random() * cumulative[-1]
    return int(min(np.searchsorted(cumulative, x, side="right"), len(cumulative) - 1))


def draw_replica(
    db: Database, rng: random.Random, *, suite: str | None = None, annotator_id: int | None = None,
    stats: SamplingStats | None = None, pool: PromptPool | None = None,
) -> Replica | None:
    """A battle (same prompt, left and right images) with exactly one non-excluded human vote, not cast by
    ``annotator_id`` and not of a prompt ``annotator_id`` has voted on (:func:`sampling.draws.seen_prompts`, kept by
    the server's ``pool``), chosen uniformly among those (:meth:`SamplingStats.pick_single_vote`); None if there is
    none, or if the server's ``stats`` are still at their first full read. Without ``stats``, a fresh one is read.

    The candidates are kept in memory, vote by vote: a draw reads one vote by its id, however many there are.
    """
    if stats is None:
        stats = SamplingStats().refresh(db, force=True, fit=False)
    else:
        stats.refresh(db, fit=False)
    seen = seen_prompts(db, annotator_id, pool).prompt_ids if annotator_id is not None else None
    vote_id = stats.pick_single_vote(rng, suite, annotator_id, seen)
    if vote_id is None:
        return None
    row = vote_pairing(db, vote_id)
    return Replica(*row) if row is not None else None  # None too when an image may no longer be shown


def draw_pairing(
    db: Database,
    rng: random.Random,
    strategy: str,
    *,
    suite: str | None = None,
    stats: SamplingStats | None = None,
    annotator_id: int | None = None,
    replication_share: float = 0.0,
    pool: PromptPool | None = None,
) -> Pairing:
    """Draw the next battle's prompt and images under ``strategy`` (module docstring).

    - With probability ``replication_share`` (one ``rng.random()`` draw, made only when it is > 0) a
      :class:`Replica` of a battle with one human vote from someone other than ``annotator_id``, of a prompt
      ``annotator_id`` has not voted on, if there is one.
    - A ``prompt_first`` strategy (:class:`sampling.strategies.Strategy`; ``uniform``): exactly
      :func:`sampling.draws.draw_uniform` (the same random draws), except while a new model warms up
      (:mod:`sampling.warmup`; only with the server's ``stats``): then a share ``warmup_share`` of the draws (one
      more ``rng.random()``) are pair-first draws among the pairs that hold a warming model, uniformly.
    - Any other (``balanced``, ``active``, a registered one): a model pair from :func:`pair_probabilities` over the
      pairs that share an eligible prompt (of ``suite``, if given), with the warm-up's share for new models
      (:func:`sampling.warmup.with_warmup`), then the least-shown prompt for that pair, an image of each, sides by a
      coin. ``stats`` is the server's :class:`SamplingStats` (kept up to date vote by vote;
      a draw reads no votes; refitted first when the strategy ``needs_fit``); without one, a fresh one is read (and
      fitted) for this draw. Before the server's first full read is done, a :class:`UniformDraw`.
    - For an annotator, the prompts they have voted on are left out while the scope has others, else only the least
      seen are kept (:mod:`sampling.draws`; ``pool`` keeps what each annotator saw): the pair is drawn with the
      strategy's probabilities conditioned on its sharing a prompt kept (when the pair drawn first has none, once
      more among those that do: one more ``rng.random()``), then the prompt among those kept. When every pair shares
      every prompt, as at study scale, that costs nothing but finding the prompts kept.

    Deterministic for a seeded ``rng`` and the same database. Raises :class:`datamodel.battles.NoBattleAvailable` when
    no prompt has images of two models.
    """
    spec = get_strategy(strategy)
    if not 0.0 <= replication_share <= 1.0:
        raise ValueError(f"replication_share is a share between 0 and 1, got {replication_share}.")
    if replication_share > 0 and rng.random() < replication_share:
        stats = stats or SamplingStats().refresh(db, force=True, fit=False)
        replica = draw_replica(db, rng, suite=suite, annotator_id=annotator_id, stats=stats, pool=pool)
        if replica is not None:
            return replica
    if spec.prompt_first:
        if stats is None or stats.params.warmup_battles <= 0:
            return draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)
        stats.refresh(db, fit=False)
    elif stats is None:
        stats = SamplingStats().refresh(db, force=True, fit=spec.needs_fit)
    else:
        stats.refresh(db, fit=spec.needs_fit)
    tables = stats.tables
    if tables is None:
        pairing = draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)
        return pairing if spec.prompt_first else UniformDraw(*astuple(pairing))
    n = len(tables.model_ids)
    eligible, available = tables.scope(suite)
    if not eligible.any():
        return draw_uniform(db, rng, suite=suite)  # raises NoBattleAvailable with the usual message
    counts = stats.pair_counts(tables)
    warming = warming_pairs(counts, available, stats.params)
    if spec.prompt_first:  # the published draw, unless this is one of the warm-up's share of draws
        if not warming.any() or rng.random() >= stats.params.warmup_share:
            return draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)
    narrowed = False  # to the prompts the annotator may see (module docstring of sampling.draws)
    if annotator_id is not None:
        seen = seen_prompts(db, annotator_id, pool)
        if len(seen):
            rows = np.flatnonzero(eligible)
            keep = seen.choosable(tables.prompt_ids[rows])
            if not keep.all():
                eligible, narrowed = np.zeros_like(eligible), True
                eligible[rows[keep]] = True
    state = stats.state if spec.needs_fit else None
    if state is not None and np.shape(state.ratings)[-1] != n:
        state = None  # the models changed and the refit has not run yet: as before the first fit meanwhile
    if spec.prompt_first:  # a warm-up draw: the warming pairs, each as likely as under the published draw
        probabilities = warming / warming.sum()
    else:
        probabilities = with_warmup(pair_probabilities(spec.name, available=available, pair_counts=counts,
                                                       state=state, params=stats.params), counts, available,
                                    stats.params)
    k = _choose(rng, probabilities)
    i, j = pair_index(n)
    a, b = int(i[k]), int(j[k])
    rows = np.flatnonzero(eligible & tables.has_image[:, a] & tables.has_image[:, b])
    if narrowed and len(rows) == 0:  # none of this pair's prompts is left to the annotator: draw among those that are
        shared = tables.pairs_sharing(np.flatnonzero(eligible))
        weights = np.where(shared, probabilities, 0.0)
        k = _choose(rng, weights if weights.sum() > 0 else shared.astype(np.float64))
        a, b = int(i[k]), int(j[k])
        rows = np.flatnonzero(eligible & tables.has_image[:, a] & tables.has_image[:, b])
    if len(rows) == 0:  # cannot happen: the pair is available
        raise NoBattleAvailable("No prompt has images of both models drawn; refresh the sampling statistics.")
    chosen = rows[_choose(rng, prompt_probabilities(*stats.prompt_counts(tables, rows, k)))]
    prompt_id = int(tables.prompt_ids[chosen])
    model_a, model_b = tables.model_ids[a], tables.model_ids[b]
    images: dict[int, list[int]] = {model_a: [], model_b: []}
    for image_id, model_id in pair_images(db, prompt_id, model_a, model_b):
        images[model_id].append(image_id)
    if not images[model_a] or not images[model_b]:  # images removed since the counts were read
        stats.reload(db)
        return UniformDraw(*astuple(draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)))
    image_a, image_b = rng.choice(images[model_a]), rng.choice(images[model_b])
    if rng.random() < 0.5:
        image_a, image_b = image_b, image_a
    stats.note_served(prompt_id, model_a, model_b)
    return Pairing(prompt_id, image_a, image_b)
