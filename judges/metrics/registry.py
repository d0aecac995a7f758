"""The automatic metrics: one :class:`Metric` declaration each, in the registry :data:`METRICS`.

A metric module (``judges/metrics/<name>.py`` listed in :data:`METRICS`' built-ins, or a plug-in's module named by an
entry point of the group ``t2i_arena.metrics``) scores a suite and ends with one declaration::

    def score_brightness(run: MetricRun, scorer) -> dict:
        rows = [MetricRow(row.model_id, "brightness", ..., "mean-luma", image_id=row.image_id, suite=run.suite)
                for row in image_rows(run.db, run.suite, models=run.models)]
        return {"brightness": {"rows": write_metrics(run.db, rows)}}

    METRICS.register(Metric(name="brightness", title="mean image brightness", direction="lower", score=score_brightness))

The registry holds, for each metric: the name ``--metrics`` knows it by and a title for the help; the names it
stores in the ``metrics`` table and which direction is better for each (``higher``, ``lower`` or ``none``); how to
build its scorer (``make_scorer(context)``: the real one from the command-line options, or a tiny random stand-in
when ``context.tiny``) and what to install when that fails (``extra``); its own command-line options; the metrics it
brings along on some suites; and how it scores a suite (``score(run, scorer)``, which writes its rows with
:func:`datamodel.metrics.write_metrics` and returns its part of the printed summary).

Everything that lists metrics asks this registry: the ``--metrics`` choices, default and options of
``python -m judges metrics``, the scorer building (:class:`Scorers`: each metric's scorer on its own, a metric whose
extra or weights are missing skipped with the reason) and :func:`judges.metrics.commands.compute_metrics`, which records
each stored name's direction in the database (``metric_directions``) so that the leaderboard flips the sign of
lower-is-better columns in its correlations. The metric modules import torch and the scorer libraries only inside
their functions, so loading the registry stays cheap.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Sequence

from core.extras import missing_extra
from core.registry import Registry, RegistryError
from datamodel.database import Database
from datamodel.metrics import DIRECTIONS  # which values are better; none: neither (a p-value, a signed difference)

# what building a scorer raises when an optional extra or weights file is missing (or weights cannot be downloaded)
UNAVAILABLE = (ImportError, OSError, RuntimeError)


class Skip(Exception):
    """Raised by a metric's ``score`` when the data cannot be scored yet; the message says what to compute first."""


@dataclass
class ScorerContext:
    """What a metric's ``make_scorer`` gets: the command-line options (``options.device``, ``options.batch_size`` and
    every metric's own), ``tiny`` (build a tiny random stand-in, offline) and the cache folder of the tiny models."""

    options: argparse.Namespace
    tiny: bool = False
    cache_dir: Path | None = None
    _shared: dict[str, tuple[Any, BaseException | None]] = field(default_factory=dict, repr=False)

    def tiny_dir(self, name: str) -> Path:
        """The folder of tiny stand-in model ``name`` in the cache."""
        if self.cache_dir is None:
            raise ValueError("tiny stand-in scorers need a cache folder: pass --cache-dir or set cache_dir.")
        return Path(self.cache_dir) / "tiny" / name

    def shared(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()`` once per context for ``key``, so that metrics share a scorer (one CLIP encoder for clip,
        commonsense and the reward stand-in); a failure is remembered and raised again for the next metric."""
        if key not in self._shared:
            try:
                self._shared[key] = (make(), None)
            except UNAVAILABLE as error:
                self._shared[key] = (None, error)
        value, error = self._shared[key]
        if error is not None:
            raise error
        return value


@dataclass
class MetricRun:
    """What a metric's ``score`` gets: the database and media folder, the suite and models to score (None: all), the
    command-line options, whether to draw progress bars, the summary so far (metrics that ran before this one) and
    ``state``, a dict the metrics of one run may share."""

    db: Database
    media: Any  # datamodel.media.MediaStore
    suite: str
    options: argparse.Namespace
    models: Sequence[str] | None = None
    progress: bool = False
    summary: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Metric:
    """One automatic metric: ``python -m judges metrics --metrics <name>`` and everything it needs.

    - ``name``: the ``--metrics`` name; ``title``: its help line.
    - ``score(run, scorer)``: scores ``run.suite`` (a :class:`MetricRun`) with the scorer ``make_scorer`` built,
      writes its rows with :func:`datamodel.metrics.write_metrics` and returns its part of the summary (a dict);
      raise :class:`Skip` with the fix when the data cannot be scored yet.
    - ``direction``: which values of its stored metrics are better, ``higher``, ``lower`` or ``none``; ``stored``: the
      metric names it writes (default: ``name``); ``directions``: {stored name: direction} where one differs.
    - ``make_scorer(context)``: builds its scorer from a :class:`ScorerContext` (the real one, or a tiny stand-in when
      ``context.tiny``); None: it needs none. A missing extra or weights file raises ImportError, OSError or
      RuntimeError with the fix in the message, and the metric is skipped with it. ``extra``: what to install for
      the real scorer (shown in the help), or None.
    - ``options``: functions adding its command-line options to a parser (each distinct function is called once, so
      metrics that share options name the same function).
    - ``default``: in the default ``--metrics`` list; ``derived``: computed from other metrics' stored rows, so it
      runs after the metrics that score images; ``companions``: {suite: metric names also run on that suite}.
    """

    name: str
    title: str
    score: Callable[[MetricRun, Any], dict]
    direction: str = "higher"
    stored: tuple[str, ...] = ()
    directions: Mapping[str, str] = field(default_factory=dict)
    make_scorer: Callable[[ScorerContext], Any] | None = None
    extra: str | None = None
    options: tuple[Callable[[argparse.ArgumentParser], None], ...] = ()
    default: bool = True
    derived: bool = False
    companions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self):
        if not self.name or any(c in self.name for c in ", "):
            raise ValueError(f"metric name {self.name!r}: use a non-empty name without commas or spaces.")
        object.__setattr__(self, "stored", tuple(self.stored) or (self.name,))
        object.__setattr__(self, "directions", MappingProxyType(dict(self.directions)))
        object.__setattr__(self, "companions", MappingProxyType({k: tuple(v) for k, v in self.companions.items()}))
        for stored, direction in (("", self.direction), *self.directions.items()):
            if direction not in DIRECTIONS:
                raise ValueError(f"metric {self.name!r}{' ' + stored if stored else ''}: direction {direction!r}; "
                                 f"use one of {', '.join(DIRECTIONS)}.")
        unknown = sorted(set(self.directions) - set(self.stored))
        if unknown:
            raise ValueError(f"metric {self.name!r}: directions name {', '.join(unknown)}, which it does not store; "
                             f"add them to stored ({', '.join(self.stored)}).")

    def outputs(self) -> dict[str, str]:
        """{stored metric name: direction} of every name it writes."""
        return {name: self.directions.get(name, self.direction) for name in self.stored}


def _check_directions(metric: Metric, others: list[Metric]) -> None:
    """Refuse a metric that stores a name another metric writes with another direction."""
    for other in others:
        clash = sorted(name for name, direction in metric.outputs().items()
                       if other.outputs().get(name, direction) != direction)
        if clash:
            raise RegistryError(f"metric {metric.name!r} stores {', '.join(clash)} with another direction than "
                                f"metric {other.name!r}; rename the stored metric(s).")


METRICS = Registry[Metric]("metrics", tuple(f"judges.metrics.{module}" for module in (
    "align_scores", "clip_scores", "clipscore", "commonsense_clip", "compbench", "consistency", "fid_is", "reward",
    "text_encoders",
)), what="metric", check=_check_directions)


def check_names(names: Iterable[str]) -> list[str]:
    """``names`` without repeats, checked: an unknown one raises :class:`RegistryError` listing the known ones."""
    names = list(dict.fromkeys(names))
    for name in names:
        METRICS[name]
    return names


def default_names() -> list[str]:
    """The metrics ``--metrics`` runs by default, in the order they run."""
    return [name for name, metric in METRICS.items() if metric.default and not metric.derived] + [
        name for name, metric in METRICS.items() if metric.default and metric.derived]


def run_order(names: Iterable[str], suite: str) -> list[str]:
    """The metrics to run for ``names`` on ``suite``: with their companions on that suite, in the order of
    :data:`METRICS`, derived metrics (computed from stored rows) last."""
    known = dict(METRICS)
    wanted = set(check_names(names))
    for name in list(wanted):
        wanted.update(companion for companion in known[name].companions.get(suite, ()) if companion in known)
    ordered = [name for name in known if name in wanted]
    return [name for name in ordered if not known[name].derived] + [name for name in ordered if known[name].derived]


def directions() -> dict[str, str]:
    """{stored metric name: direction} over every registered metric."""
    return {name: direction for metric in METRICS.values() for name, direction in metric.outputs().items()}


def lower_is_better(column: str) -> bool:
    """Whether a smaller value is better in a stored metric or a model × metric table column (``name``,
    ``name (suite)``, ``name [scorer]``), by the registered metrics' declarations."""
    return directions().get(column.split(" ")[0]) == "lower"


def scorer_options(parser: argparse.ArgumentParser) -> None:
    """The options every scorer reads: ``--device`` and ``--batch-size``."""
    parser.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument("--batch-size", type=int, default=32, help="images per forward pass (default 32)")


def add_metric_options(parser: argparse.ArgumentParser) -> None:
    """Add the scorer options and every registered metric's own options (each option function once)."""
    seen: list[Callable] = [scorer_options]
    scorer_options(parser)
    for metric in METRICS.values():
        for add in metric.options:
            if add not in seen:
                seen.append(add)
                add(parser)


def metric_options(**overrides: Any) -> argparse.Namespace:
    """The command line's metric options at their defaults, with ``overrides`` (e.g. ``fid_reference="*"``); an
    unknown override raises ValueError naming the known options."""
    parser = argparse.ArgumentParser(add_help=False)
    add_metric_options(parser)
    options = parser.parse_args([])
    unknown = sorted(set(overrides) - set(vars(options)))
    if unknown:
        raise ValueError(f"unknown metric option(s) {', '.join(unknown)}; known: {', '.join(sorted(vars(options)))}.")
    for key, value in overrides.items():
        setattr(options, key, value)
    return options


class Scorers:
    """Each metric's scorer, built on first use from one :class:`ScorerContext`: a metric whose extra or weights are
    missing is left out and the reason (what to install or which option to set) kept in ``unavailable``."""

    def __init__(self, options: argparse.Namespace | None = None, *, tiny: bool = False,
                 cache_dir: str | Path | None = None):
        self.options = options if options is not None else metric_options()
        self.context = ScorerContext(self.options, tiny=tiny, cache_dir=Path(cache_dir) if cache_dir else None)
        self.unavailable: dict[str, str] = {}
        self._built: dict[str, Any] = {}

    def ready(self, name: str) -> bool:
        """Build metric ``name``'s scorer if not yet tried; whether it is available."""
        if name not in self._built and name not in self.unavailable:
            metric = METRICS[name]
            try:
                self._built[name] = metric.make_scorer(self.context) if metric.make_scorer else None
            except UNAVAILABLE as error:
                self.unavailable[name] = missing_extra(error, f"metric {name}") or str(error)
        return name in self._built

    def build(self, names: Iterable[str]) -> "Scorers":
        """Build the scorers of ``names`` now (each on its own); return self."""
        for name in names:
            self.ready(name)
        return self

    def __getitem__(self, name: str) -> Any:
        if not self.ready(name):
            raise LookupError(f"metric {name!r} cannot run: {self.unavailable[name]}")
        return self._built[name]
