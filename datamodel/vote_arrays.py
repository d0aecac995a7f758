"""The votes of a slice as integer arrays: what the leaderboard computes on, read in one pass over the votes table.

A million votes as a pandas vote table (:func:`datamodel.vote_table.votes_frame`, 29 columns, joined through battles,
prompts, images and models) took 3.7 GB and most of a minute to read. The statistics need far less per vote: who
voted (an annotator id, or a judge), the two models as displayed, the outcome, the two images (which name the
battle whatever the sides), the strategy that drew it and whether it is excluded. The votes table holds all of it
(:func:`datamodel.schema._study_scale`), so :func:`read_vote_arrays` scans it alone, packs each vote into one
integer in SQL (two where the ids are too many for 62 bits), hands them over as one text per block of votes and
decodes them with numpy: about 0.4 s of CPU and 60 MB per million votes, where fetching the rows as Python tuples
took 1 s. The vote times are read only when asked (they cost as much again, and the leaderboard filters by date in
SQL).

Codes
    ``model_a``/``model_b`` index :attr:`VoteArrays.models`, sorted by name (as :func:`ratings.votes.encode_votes`
    numbers them, so orientation "by name" is ``model_a > model_b``); ``outcome`` indexes OUTCOMES; ``voter`` is the
    annotator id for a human vote and −1−k for judge k of :attr:`VoteArrays.judges`; ``subset`` and ``strategy``
    index :attr:`VoteArrays.subsets` and :attr:`VoteArrays.strategies` (the strategies asked for, then "other", then
    "imported"); ``source`` is 0 for the arena's own votes and 1 + k for imported source k of
    :attr:`VoteArrays.sources`; ``time`` is the vote's unix time (NaN: unknown); ``anonymous`` whether the voter did
    not see the model names (the arena's own votes always; an imported vote when its file says so).

Imported votes (:mod:`datamodel.imported_votes`) join the arrays when ``source`` asks for them: an imported human
vote has voter code 0 (no annotator has that id), an imported judge vote its judge's code, and each imported battle
two image ids of its own above every real one (so two votes on one imported battle share a battle key and no
imported vote shares one with the arena's), unless the file carried the images: then the vote names the images it
showed, as the arena's votes do (a judge's vote on the same two images meets it). With imported votes the arrays are
in time order (stable: votes without a time first, in the order they were imported); the arena's own votes alone stay
in vote order. An imported vote an
import flagged (a self-battle, ...) has ``flag`` > 0, naming its reason in ``flags``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from datamodel.change_logs import pruned_through
from datamodel.database import Database
from datamodel.dialect import json_text_items, pick
from datamodel.models import model_names, sorted_model_names
from datamodel.schema import OUTCOMES
from ratings.votes import EncodedVotes, count_tensor

SLICE_FILTERS = ("suite", "subset", "variant", "category", "voter")
_PROMPT_COLUMNS = {"suite": "suite", "subset": "subset", "variant": "variant"}
_CHUNK = 65_536


@dataclass(frozen=True)
class VoteArrays:
    """One entry per vote, in vote order (see the module docstring for the codes)."""

    models: tuple[str, ...]
    judges: tuple[str, ...]
    subsets: tuple[str, ...]
    strategies: tuple[str, ...]
    image_bound: int  # every image id is below it
    voter: np.ndarray
    model_a: np.ndarray
    model_b: np.ndarray
    outcome: np.ndarray
    image_a: np.ndarray
    image_b: np.ndarray
    subset: np.ndarray
    strategy: np.ndarray
    excluded: np.ndarray
    time: np.ndarray
    anonymous: np.ndarray
    source: np.ndarray
    sources: tuple[str, ...] = ()
    flag: np.ndarray | None = None  # 0: a clean vote; k: flagged with reason flags[k - 1] (imported votes only)
    flags: tuple[str, ...] = ()
    vote_id: np.ndarray | None = None  # each vote's id in the votes table (None once imported votes join them)

    @property
    def flagged(self) -> np.ndarray:
        """The votes an import kept with an anomaly (a self-battle, ...): see :mod:`arena.vote_import`."""
        return np.zeros(len(self), dtype=bool) if self.flag is None else self.flag > 0

    def __len__(self) -> int:
        return len(self.outcome)

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def human(self) -> np.ndarray:
        return self.voter >= 0

    @property
    def own(self) -> np.ndarray:
        """The arena's own votes (not imported)."""
        return self.source == 0

    def encoded(self) -> EncodedVotes:
        """The votes in the vote format of :mod:`ratings` (for :mod:`ratings.protocols`), in this order, flagged
        votes marked (each protocol treats them as its source did)."""
        return EncodedVotes(self.models, self.model_a, self.model_b, self.outcome,
                            None if self.flag is None else self.flag > 0)

    def flag_counts(self) -> dict[str, int]:
        """Votes per flag reason (only reasons with votes)."""
        if self.flag is None or not len(self.flags):
            return {}
        counts = np.bincount(self.flag, minlength=len(self.flags) + 1)[1:]
        return {name: int(n) for name, n in zip(self.flags, counts) if n}

    def judge(self, name: str | None) -> np.ndarray:
        """The votes of judge voter ``name`` (none for None or a judge without votes here)."""
        if name not in self.judges:
            return np.zeros(len(self), dtype=bool)
        return self.voter == -1 - self.judges.index(name)

    def take(self, mask: np.ndarray) -> VoteArrays:
        """The votes where ``mask`` (booleans) holds, in the same order; these arrays themselves when it holds for
        every vote (nothing changes them in place)."""
        if mask.all():
            return self
        per_vote = {f.name: getattr(self, f.name)[mask] for f in fields(self)
                    if isinstance(getattr(self, f.name), np.ndarray)}
        return replace(self, **per_vote)

    def counts(self) -> np.ndarray:
        """The count tensor ``counts[i, j, o]`` of these votes (:mod:`ratings.votes`)."""
        return count_tensor(self.model_a, self.model_b, self.outcome, self.n_models)

    def battle_keys(self) -> np.ndarray:
        """One integer per vote naming its battle whatever the sides: the two image ids, smaller first (the
        images name the prompt too, so this is the ``pair_key`` of :func:`datamodel.vote_table.votes_frame`)."""
        low, high = np.minimum(self.image_a, self.image_b), np.maximum(self.image_a, self.image_b)
        return low * self.image_bound + high

    def oriented_outcomes(self) -> np.ndarray:
        """Outcome codes with A meaning the model whose name sorts first won (:mod:`ratings.agreement`)."""
        swap = self.model_a > self.model_b
        return np.where(swap, np.array([1, 0, 2, 3])[self.outcome], self.outcome)


def _slice_sql(db, filters: dict, table: str = "v", own_prompt_columns: bool = False) -> tuple[str, list]:
    """The WHERE clause over the votes ``table`` for the filters: a voter filter uses the voter index; prompt filters
    become a set of prompt ids (the prompts table is small), except that with ``own_prompt_columns`` (imported
    votes, which carry suite, subset and variant themselves) suite, subset and variant are the votes' own columns.
    The votes table is scanned in id order otherwise."""
    clauses, params = [], []
    prompt_clauses, prompt_params = [], []
    for name, value in filters.items():
        if value is None:
            continue
        if name in _PROMPT_COLUMNS and own_prompt_columns:
            clauses.append(f"{table}.{name} = ?")
            params.append(value)
        elif name in _PROMPT_COLUMNS:
            prompt_clauses.append(f"{_PROMPT_COLUMNS[name]} = ?")
            prompt_params.append(value)
        elif name == "category":
            items, item = json_text_items(db, "metadata", "categories", "c")
            prompt_clauses.append(f"(json_extract(metadata, '$.category') = ? OR EXISTS (SELECT 1 FROM {items} "
                                  f"WHERE {item} = ?))")
            prompt_params += [value, value]
        elif name == "voter":
            clauses.append(f"{table}.voter = ?")
            params.append(value)
        else:
            raise ValueError(f"Cannot slice votes by {name}: use {', '.join(SLICE_FILTERS)}.")
    if prompt_clauses:
        clauses.append(f"{table}.prompt_id IN (SELECT id FROM prompts WHERE {' AND '.join(prompt_clauses)})")
        params += prompt_params
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


prompt_slice_sql = _slice_sql  # the same slice over another table with a prompt_id (the four-image battles)

ARENA_SOURCE = "arena"  # the source name of the arena's own votes


def read_vote_arrays(db: Database, strategies: tuple[str, ...] = (), *, source: str | None = ARENA_SOURCE,
                     anonymous_only: bool = False, include_excluded: bool = True, until: float | None = None,
                     times: bool = True, ids: tuple[int | None, int | None] = (None, None),
                     also: tuple[int, ...] = (), **filters) -> VoteArrays:
    """The votes matching ``filters`` (suite, subset, variant, category, voter: one value each, None for any). A
    category matches a prompt's ``category`` or any entry of its ``categories`` list. ``strategies`` names the
    sampling strategies to tell apart; any other is "other". ``source``: ``"arena"`` (the default) the arena's own
    votes, None every vote with the imported ones, any other name one import source's votes. ``anonymous_only`` keeps
    the votes cast without the model names shown; ``include_excluded=False`` leaves out the excluded ones (else the
    ``excluded`` array marks them); ``until`` keeps the votes cast by then (an imported vote without a time is left
    out). ``times=False`` leaves ``time`` unknown (NaN) for the arena's own votes unless imported votes join them
    (their order needs it): reading it is a third of the read. ``ids`` (after, through): only the arena's own votes
    with ``after < id <= through`` (None: no bound), and those whose id is in ``also``, as :class:`VoteArraysCache`
    reads."""
    models = tuple(sorted_model_names(db))
    index_of = model_names(db)
    by_name = {name: i for i, name in enumerate(models)}
    model_index = np.zeros(max(index_of, default=0) + 1, dtype=np.int64)
    for model_id, name in index_of.items():
        model_index[model_id] = by_name[name]
    own = source in (None, ARENA_SOURCE)
    imported = source != ARENA_SOURCE
    judges = tuple(name for name, in db.execute(
        "SELECT DISTINCT voter FROM votes WHERE voter_kind = 'judge' "
        + ("UNION SELECT DISTINCT voter FROM imported_votes WHERE voter_kind = 'judge' " if imported else "")
        + "ORDER BY voter"))
    strategies = (*strategies, "other", "imported")
    subset_rows = db.execute("SELECT id, subset FROM prompts").fetchall()
    imported_subsets = [s for s, in db.execute("SELECT DISTINCT subset FROM imported_votes")] if imported else []
    subsets = tuple(sorted({subset for _, subset in subset_rows} | set(imported_subsets)))
    prompt_subset = np.zeros(max((p for p, _ in subset_rows), default=0) + 1, dtype=np.int64)
    for prompt_id, subset in subset_rows:
        prompt_subset[prompt_id] = subsets.index(subset)
    image_prompt = np.zeros(int(db.execute("SELECT coalesce(max(id), 0) FROM images").fetchone()[0]) + 1, np.int64)
    for image_id, prompt_id in db.execute("SELECT id, prompt_id FROM images"):
        image_prompt[image_id] = prompt_id

    width, images = int(model_index.size), int(image_prompt.size)  # model ids are < width, image ids < images
    annotators = int(db.execute("SELECT coalesce(max(id), 0) FROM annotators").fetchone()[0]) + 1
    judge_case = " ".join(f"WHEN ? THEN {-1 - k}" for k in range(len(judges)))
    strategy_case = " ".join(f"WHEN ? THEN {k}" for k in range(len(strategies)))
    outcome_case = " ".join(f"WHEN '{o}' THEN {k}" for k, o in enumerate(OUTCOMES))
    fields: tuple[tuple[str, str, int, list[str]], ...] = (  # name, SQL of a value in [0, bound), bound, its parameters
        ("voter", f"coalesce(v.annotator_id, CASE v.voter {judge_case or 'WHEN NULL THEN 0'} END) + {len(judges)}",
         annotators + len(judges), list(judges)),
        ("strategy", f"CASE v.strategy {strategy_case} ELSE {len(strategies) - 2} END", len(strategies),
         list(strategies)),
        ("left_model", "v.left_model_id", width, []), ("right_model", "v.right_model_id", width, []),
        ("outcome", f"CASE v.outcome {outcome_case} END", len(OUTCOMES), []), ("excluded", "v.excluded", 2, []),
        ("left_image", "v.left_image_id", images, []), ("right_image", "v.right_image_id", images, []),
    )
    where, params = _slice_sql(db, filters)
    if not include_excluded:
        where = _and(where, "v.excluded = 0")
    if until is not None:
        where, params = _and(where, "v.voted_at <= ?"), [*params, until]
    within: list[str] = []
    bounds: list[int] = []
    for bound, clause in zip(ids, ("v.id > ?", "v.id <= ?")):
        if bound is not None:
            within, bounds = [*within, clause], [*bounds, int(bound)]
    if within and also:
        where = _and(where, f"(({' AND '.join(within)}) OR v.id IN ({', '.join('?' * len(also))}))")
        params = [*params, *bounds, *map(int, also)]
        ids = (None if ids[0] is None else min(min(also) - 1, ids[0]), ids[1])
    elif within:
        where, params = _and(where, " AND ".join(within)), [*params, *bounds]
    got = _read_packed(db, "votes v", where, params, fields, ids) if own else {name: np.zeros(0, np.int64)
                                                                          for name in [*(f[0] for f in fields), "id"]}
    n_votes = len(got["outcome"])
    time = np.full(n_votes, np.nan)
    joined = imported and db.execute("SELECT 1 FROM imported_votes LIMIT 1").fetchone() is not None
    if own and (times or joined) and n_votes:  # by id: a vote that arrived since the read above is not among them
        stamped = _fetch(db, f"SELECT v.id, v.voted_at FROM votes v{_and(where, 'v.id <= ?')} ORDER BY v.id",
                         [*params, int(got["id"][-1])], 2)
        at = np.minimum(np.searchsorted(got["id"], stamped[:, 0]), n_votes - 1)
        found = got["id"][at] == stamped[:, 0]
        time[at[found]] = stamped[found, 1]
    image_a = got["left_image"]
    arrays = VoteArrays(
        models=models, judges=judges, subsets=subsets, strategies=strategies, image_bound=images,
        voter=got["voter"] - len(judges), model_a=model_index[got["left_model"]],
        model_b=model_index[got["right_model"]], outcome=got["outcome"], image_a=image_a, image_b=got["right_image"],
        subset=prompt_subset[image_prompt[image_a]], strategy=got["strategy"], excluded=got["excluded"].astype(bool),
        time=time, anonymous=np.ones(n_votes, dtype=bool), source=np.zeros(n_votes, dtype=np.int64),
        vote_id=got["id"],
    )
    if not imported:
        return arrays
    return _with_imported(db, arrays, model_index, source, anonymous_only, until, filters)


@dataclass(frozen=True)
class _Held:
    arrays: VoteArrays
    votes_version: int  # data_versions' votes counter, read first
    catalog_version: int
    change: int  # the last row of vote_changes, read next
    through: int  # the largest vote id, read last: the arrays hold the votes up to it


_MOST_CHANGED = 500  # votes whose exclusion changed that are patched in; more and the slice is read afresh


class VoteArraysCache:
    """The vote arrays of the last slices read (at most ``slices``; each about 100 MB per million votes), brought up
    to date by reading only what changed since: what a leaderboard worker keeps between snapshots.

    :meth:`read` takes :func:`read_vote_arrays`' arguments. A slice read before is brought up to date when what
    changed since is votes added (read by id) and exclusions switched (each logged in ``vote_changes``: the votes
    whose flag moved are taken out and read again): the votes counter of ``data_versions`` (raised once per inserted,
    updated or deleted vote) has risen by exactly the rows ``vote_changes`` gained (one per inserted vote, per
    switched exclusion and per deleted counted vote), the catalog counter (models, prompts, images: the codes) has
    not moved, no vote with a logged change is gone and the new votes name no new judge. Anything else (an admin's
    review that left the flag, a deletion, a new model, a vote committed out of id order on PostgreSQL, rows of the
    log since the slice's read pruned: :mod:`datamodel.change_logs`) reads the slice afresh, as does a slice that
    reads imported votes. The counters are read first, the change log next, the largest id last, so a change in
    between looks like one the log does not explain and the slice is read afresh: never a vote twice or missed."""

    def __init__(self, slices: int = 2):
        self.slices = slices
        self._held: OrderedDict[tuple, _Held] = OrderedDict()

    def read(self, db: Database, strategies: tuple[str, ...] = (), **kwargs) -> VoteArrays:
        key = (tuple(strategies), tuple(sorted(kwargs.items())))
        versions = dict(db.execute("SELECT name, version FROM data_versions").fetchall())
        change = int(db.execute("SELECT coalesce(max(seq), 0) FROM vote_changes").fetchone()[0])
        through = int(db.execute("SELECT coalesce(max(id), 0) FROM votes").fetchone()[0])
        held = self._held.pop(key, None)
        arrays = None
        if held is not None:
            arrays = self._brought_up_to_date(db, held, strategies, kwargs, versions, change, through)
        if arrays is None:
            arrays = read_vote_arrays(db, strategies, ids=(None, through), **kwargs)
        if arrays.vote_id is not None:  # the arena's own votes alone: imported ones are read afresh each time
            self._held[key] = _Held(arrays, versions["votes"], versions["catalog"], change, through)
            while len(self._held) > self.slices:
                self._held.popitem(last=False)
        return arrays

    @staticmethod
    def _brought_up_to_date(db, held: _Held, strategies, kwargs: dict, versions: dict, change: int,
                            through: int) -> VoteArrays | None:
        """``held``'s arrays with what changed since, or None where that cannot be trusted (class docstring)."""
        if versions["catalog"] != held.catalog_version or through < held.through or change < held.change:
            return None
        logged = db.execute("SELECT vote_id FROM vote_changes WHERE seq > ? AND seq <= ?",
                            [held.change, change]).fetchall()
        if pruned_through(db, "vote_changes") > held.change:
            return None  # rows it needs were pruned (datamodel.change_logs)
        if versions["votes"] - held.votes_version != len(logged):
            return None
        if not logged and through == held.through:
            return held.arrays
        switched = sorted({vote for vote, in logged if vote <= held.through})
        if len(switched) > _MOST_CHANGED:
            return None
        if switched and db.execute(f"SELECT count(*) FROM votes WHERE id IN ({', '.join('?' * len(switched))})",
                                   switched).fetchone()[0] != len(switched):
            return None  # a counted vote was deleted
        # the votes whose flag moved as they are now (if the slice has them), and the new ones, in one read
        changed = read_vote_arrays(db, strategies, ids=(held.through, through), also=tuple(switched), **kwargs)
        return _merged(held.arrays, switched, changed)


def _merged(arrays: VoteArrays, switched: list[int], changed: VoteArrays) -> VoteArrays | None:
    """``arrays`` without the votes ``switched`` (their ids), with ``changed`` put in, all in id order (each is in
    it); None if their codes differ (a new judge: every judge's code moves) or either holds imported votes (no ids)."""
    codes = ("models", "judges", "subsets", "strategies", "image_bound", "sources", "flags")
    if any(getattr(arrays, name) != getattr(changed, name) for name in codes):
        return None
    if arrays.vote_id is None or changed.vote_id is None:
        return None
    replaced = np.isin(arrays.vote_id, switched)
    kept = ~replaced
    size = int(kept.sum()) + len(changed)
    at = np.searchsorted(arrays.vote_id[kept], changed.vote_id) + np.arange(len(changed))  # where each lands
    others = np.ones(size, dtype=bool)
    others[at] = False
    per_vote: dict[str, Any] = {}  # field name: its merged array
    for f in fields(arrays):
        old, new = getattr(arrays, f.name), getattr(changed, f.name)
        if isinstance(old, np.ndarray):
            merged = np.empty(size, dtype=old.dtype)
            merged[others] = old[kept] if replaced.any() else old
            merged[at] = new
            per_vote[f.name] = merged
    return replace(arrays, **per_vote)


def _and(where: str, clause: str) -> str:
    return f"{where} AND {clause}" if where else f" WHERE {clause}"


_WORD = 2**62  # a packed integer stays below it: SQLite turns an integer that overflows 64 bits into a float
_IDS_PER_READ = 1 << 20  # votes (by id) read as one text at a time: about 20 MB of it


def _read_packed(db: Database, table: str, where: str, params: list,
                 fields: tuple[tuple[str, str, int, list], ...],
                 ids: tuple[int | None, int | None] = (None, None)) -> dict[str, np.ndarray]:
    """The integer ``fields`` (name, SQL of a value in [0, bound), bound, parameters) of every row of ``table`` (alias
    ``v``) matching ``where``, in id order, as arrays by name.

    Handing a million rows to Python as tuples costs more than scanning them: the fields are packed into as few
    integers per row as fit below 2⁶² (mixed radix, the bounds as the bases), each packed column is joined into one
    comma-separated text per block of ids in SQL (``group_concat``; PostgreSQL's ``string_agg``) and parsed by
    ``numpy.fromstring``: a third of the time of fetching the rows. A row whose fields are missing (NULL) stops the
    read with the ids of such rows (an aggregate would skip it silently)."""
    words: list[list[tuple[str, str, int, list]]] = []
    for field in fields:
        bound = int(np.prod([f[2] for f in words[-1]], dtype=object)) if words else _WORD
        if bound * max(field[2], 1) >= _WORD:
            words.append([])
        words[-1].append(field)
    columns, word_params = [], []
    for word in words:
        sql = f"CAST({word[0][1]} AS BIGINT)"
        for _, text, bound, _ in word[1:]:
            sql = f"({sql}) * {max(bound, 1)} + ({text})"
        columns.append(sql)
        word_params += [p for field in word for p in field[3]]
    named = ", ".join(f"{sql} AS w{k}" for k, sql in enumerate(columns))
    joined = ", ".join(pick(db, sqlite=f"group_concat(s.{name}, ',')", postgresql=f"string_agg(s.{name}::text, ',' "
                            "ORDER BY s.id)") for name in [f"w{k}" for k in range(len(columns))] + ["id"])
    missing = " OR ".join(f"s.w{k} IS NULL" for k in range(len(columns)))
    low, high = db.execute(f"SELECT min(id), max(id) FROM {table.split()[0]}").fetchone()
    if low is not None:  # only the blocks the id bounds can reach
        low = low if ids[0] is None else max(low, ids[0] + 1)
        high = high if ids[1] is None else min(high, ids[1])
    parts: list[list[np.ndarray]] = [[] for _ in range(len(columns) + 1)]  # the packed words, then the ids
    for start in range(int(low or 0), int(high or 0) + 1 if high is not None else 0, _IDS_PER_READ):
        block = _and(where, f"v.id BETWEEN {start} AND {start + _IDS_PER_READ - 1}")
        inner = f"SELECT v.id AS id, {named} FROM {table}{block} ORDER BY v.id"
        row = db.execute(f"SELECT {joined}, count(*), sum(CASE WHEN {missing} THEN 1 ELSE 0 END) FROM ({inner}) s",
                         [*word_params, *params]).fetchone()
        if row[-1]:
            bad = [i for i, in db.execute(f"SELECT s.id FROM ({inner}) s WHERE {missing} LIMIT 5",
                                          [*word_params, *params])]
            raise ValueError(f"{row[-1]} vote(s) lack the models, images, outcome or voter their battle recorded "
                             f"(ids {', '.join(map(str, bad))}, ...): run python -m arena migrate, or repair them.")
        for k in range(len(parts)):
            parts[k].append(np.fromstring(row[k] or "", dtype=np.int64, sep=",") if row[-2] else
                            np.zeros(0, np.int64))
    got: dict[str, np.ndarray] = {}
    for word, part in zip(words, parts):
        packed = np.concatenate(part) if part else np.zeros(0, np.int64)
        for name, _, bound, _ in reversed(word):
            packed, got[name] = np.divmod(packed, max(bound, 1))
    return {**{name: got[name] for name, *_ in fields}, "id": np.concatenate(parts[-1]) if parts[-1] else
            np.zeros(0, np.int64)}


def _fetch(db: Database, sql: str, params: list, columns: int) -> np.ndarray:
    cursor = db.execute(sql, params)
    chunks = []
    while rows := cursor.fetchmany(_CHUNK):
        chunks.append(np.array(rows, dtype=np.float64).reshape(-1, columns))
    return np.concatenate(chunks) if chunks else np.zeros((0, columns))


def _imported_sql(db, filters: dict, source: str | None, anonymous_only: bool,
                  until: float | None = None) -> tuple[str, list]:
    where, params = _slice_sql(db, filters, "iv", own_prompt_columns=True)
    clauses = [where.removeprefix(" WHERE ")] if where else []
    if source is not None:
        clauses.append("iv.source = ?")
        params.append(source)
    if anonymous_only:
        clauses.append("iv.anonymous = 1")
    if until is not None:
        clauses.append("iv.voted_at <= ?")
        params.append(until)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _with_imported(db: Database, arrays: VoteArrays, model_index: np.ndarray, source: str | None,
                   anonymous_only: bool, until: float | None, filters: dict) -> VoteArrays:
    """``arrays`` (the arena's own votes) with the imported votes of the slice added, all in time order."""
    import pandas as pd

    sources = tuple(name for name, in db.execute("SELECT DISTINCT source FROM imported_votes ORDER BY source"))
    if not sources:
        return arrays
    where, params = _imported_sql(db, filters, source, anonymous_only, until)
    judge_case = " ".join(f"WHEN ? THEN {1 + k}" for k in range(len(arrays.judges)))
    source_case = " ".join(f"WHEN ? THEN {k}" for k in range(len(sources)))
    subset_case = " ".join(f"WHEN ? THEN {k}" for k in range(len(arrays.subsets)))
    outcome_case = " ".join(f"WHEN '{o}' THEN {k}" for k, o in enumerate(OUTCOMES))
    width, n_subsets, n_sources = int(model_index.size), max(1, len(arrays.subsets)), len(sources)
    # one integer per vote: judge (0: a human), models, outcome, subset, source, anonymous
    code_sql = (f"(((((CASE iv.voter_kind WHEN 'judge' THEN CASE iv.voter {judge_case or 'WHEN NULL THEN 0'} END "
                f"ELSE 0 END * {width} + iv.left_model_id) * {width} + iv.right_model_id) * 4 "
                f"+ CASE iv.outcome {outcome_case} END) * {n_subsets} "
                f"+ CASE iv.subset {subset_case or 'WHEN NULL THEN 0'} END) * {n_sources} "
                f"+ CASE iv.source {source_case} END) * 2 + coalesce(iv.anonymous, 0)")
    flags = tuple(name for name, in db.execute("SELECT DISTINCT flag FROM imported_votes WHERE flag != '' "
                                                "ORDER BY flag"))
    flag_case = " ".join(f"WHEN ? THEN {1 + k}" for k in range(len(flags)))
    cursor = db.execute(f"SELECT {code_sql}, coalesce(iv.voted_at, -1e308), iv.battle_hash, "
                        f"CASE iv.flag {flag_case or 'WHEN NULL THEN 0'} ELSE 0 END, coalesce(iv.left_image_id, -1), "
                        f"coalesce(iv.right_image_id, -1) FROM imported_votes iv{where} ORDER BY iv.id",
                        [*arrays.judges, *arrays.subsets, *sources, *flags, *params])
    layout = np.dtype([("code", np.int64), ("time", np.float64), ("battle", np.int64), ("flag", np.int64),
                       ("left", np.int64), ("right", np.int64)])
    parts = []
    while rows := cursor.fetchmany(_CHUNK):
        parts.append(np.array(rows, dtype=layout))
    if not parts:
        return replace(arrays, sources=sources, flags=flags, flag=np.zeros(len(arrays), dtype=np.int64))
    got = np.concatenate(parts)
    code, time = got["code"], np.where(got["time"] < -1e307, np.nan, got["time"])
    anonymous, code = (code & 1).astype(bool), code >> 1
    source_index, code = code % n_sources, code // n_sources
    subset, code = code % n_subsets, code // n_subsets
    outcome, code = code % 4, code // 4
    right, code = code % width, code // width
    left, judge = code % width, code // width
    battle, _ = pd.factorize(got["battle"])
    first_image = arrays.image_bound
    shown = got["left"] >= 0  # the file carried the images: the vote names its battle by them, as the arena's do
    imported = VoteArrays(
        models=arrays.models, judges=arrays.judges, subsets=arrays.subsets, strategies=arrays.strategies,
        image_bound=first_image + 2 * (int(battle.max()) + 1), voter=np.where(judge > 0, -judge, 0),
        model_a=model_index[left], model_b=model_index[right], outcome=outcome,
        image_a=np.where(shown, got["left"], first_image + 2 * battle),
        image_b=np.where(shown, got["right"], first_image + 2 * battle + 1), subset=subset,
        strategy=np.full(len(got), len(arrays.strategies) - 1),
        excluded=np.zeros(len(got), dtype=bool), time=time, anonymous=anonymous, source=source_index + 1,
        sources=sources, flag=got["flag"], flags=flags,
    )
    arrays = replace(arrays, flag=np.zeros(len(arrays), dtype=np.int64))
    every: dict[str, Any] = {f.name: np.concatenate([getattr(arrays, f.name), getattr(imported, f.name)])
                             for f in fields(VoteArrays) if isinstance(getattr(imported, f.name), np.ndarray)}
    order = np.argsort(np.where(np.isnan(every["time"]), -np.inf, every["time"]), kind="stable")
    every = {name: values[order] for name, values in every.items()}
    return replace(imported, **every)


def newest_human_votes(db: Database, *, left_model: str, right_model: str, outcome: str, limit: int,
                       source: str | None = ARENA_SOURCE, anonymous_only: bool = False, include_excluded: bool = False,
                       until: float | None = None, **filters) -> list[dict]:
    """The ``limit`` most recent human votes of the slice (the filters of :func:`read_vote_arrays`) that showed
    ``left_model`` as A and ``right_model`` as B and ended in ``outcome``, newest first: the arena's own as
    ``{"vote_id", "voter", "battle_id", "voted_at"}``, imported ones as ``{"source", "original_id", "voter",
    "voted_at"}``. Excluded votes only with ``include_excluded``; ``until``: cast by then."""
    found: list[dict] = []
    model = "(SELECT id FROM models WHERE name = ?)"
    if source in (None, ARENA_SOURCE):
        where, params = _slice_sql(db, filters)
        clauses = [where.removeprefix(" WHERE ")] if where else []
        clauses += [f"v.left_model_id = {model}", f"v.right_model_id = {model}", "v.outcome = ?",
                    "v.voter_kind = 'human'"]
        params += [left_model, right_model, outcome]
        if not include_excluded:
            clauses.append("v.excluded = 0")
        if until is not None:
            clauses.append("v.voted_at <= ?")
            params.append(until)
        rows = db.execute(f"SELECT v.id, v.voter, v.battle_id, v.voted_at FROM votes v WHERE {' AND '.join(clauses)} "
                          "ORDER BY v.id DESC LIMIT ?", [*params, limit]).fetchall()
        found += [{"vote_id": i, "voter": voter, "battle_id": battle, "voted_at": at} for i, voter, battle, at in rows]
    if source != ARENA_SOURCE:
        where, params = _imported_sql(db, filters, source, anonymous_only)
        clauses = [where.removeprefix(" WHERE ")] if where else []
        clauses += [f"iv.left_model_id = {model}", f"iv.right_model_id = {model}", "iv.outcome = ?",
                    "iv.voter_kind = 'human'"]
        params += [left_model, right_model, outcome]
        if until is not None:
            clauses.append("iv.voted_at <= ?")
            params.append(until)
        rows = db.execute(f"SELECT iv.source, iv.original_id, iv.voter, iv.voted_at FROM imported_votes iv WHERE "
                          f"{' AND '.join(clauses)} ORDER BY iv.id DESC LIMIT ?", [*params, limit]).fetchall()
        found += [{"source": s, "original_id": o, "voter": voter, "voted_at": at} for s, o, voter, at in rows]
    found.sort(key=lambda vote: -(vote["voted_at"] if vote["voted_at"] is not None else -1e308))
    return found[:limit]
