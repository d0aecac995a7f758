"""The sampler's vote counts as arrays, read in one pass and kept vote by vote.

:class:`CountTables` holds what a draw needs of the database (which prompt has an image of which model, the votes
per displayed pair and outcome, per pair, per prompt and pair, per prompt) and :class:`BattleCounts` the votes per
battle, which find a battle with one vote to replicate; :func:`read_count_tables` reads both in one read transaction
and :meth:`CountTables.add` counts (or uncounts) one vote, a :class:`VoteFacts`. The server's
:class:`sampling.sampler.SamplingStats` keeps them up to date; the draws (:mod:`sampling.draws`) read them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from datamodel.database import Database
from datamodel.sampling_reads import read_count_rows, votes_by_id
from ratings.votes import OUTCOMES
from sampling.strategies import pair_index, pair_votes


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
    """Non-excluded human votes per battle (:func:`battle_key`), for :func:`sampling.draws.draw_replica`.

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
                         "(sampling.counts.battle_key).")
    battles = BattleCounts((low << 32) | high, count, id_sum, annotator_sum, prompt_codes[p], p)
    return CountTables(model_ids, prompt_ids, prompt_suites, has_image, counts, pair_votes(counts),
                       prompt_pair_counts, prompt_pair_counts.sum(axis=1), battles,
                       data_version=int(versions.get("votes", 0)), catalog_version=int(versions.get("catalog", 0)),
                       change_seq=read.change_seq)
