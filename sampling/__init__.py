"""Which battle comes next: the strategies' declarations and maths (:mod:`~sampling.strategies`, pure; a new
strategy is one :class:`Strategy` passed to :func:`register_strategy`), the prompt pool and the uniform draw
(:mod:`~sampling.draws`), a server's vote counts and the draws of the pair-first strategies (:mod:`~sampling.sampler`),
and the admin's tables of where the votes went (:mod:`~sampling.coverage`)."""

from sampling.coverage import strategy_note, votes_by_strategy, votes_per_model, votes_per_pair, votes_per_prompt
from sampling.draws import NoBattleAvailable, PromptPool, draw_uniform, serve_battle
from sampling.sampler import Replica, SamplingStats, UniformDraw, draw_pairing, read_count_tables, vote_facts
from sampling.strategies import (STRATEGIES, SamplingParams, Strategy, active_pair_weights, check_strategy,
                                 fit_state, get_strategy, misorder_probabilities, model_votes, n_models_of,
                                 pair_index, pair_probabilities, pair_votes, register_strategy, unregister_strategy)

__all__ = [
    "NoBattleAvailable", "PromptPool", "Replica", "STRATEGIES", "SamplingParams", "SamplingStats", "Strategy",
    "UniformDraw", "active_pair_weights", "check_strategy", "draw_pairing", "draw_uniform", "fit_state",
    "get_strategy", "misorder_probabilities", "model_votes", "n_models_of", "pair_index", "pair_probabilities",
    "pair_votes", "read_count_tables", "register_strategy", "serve_battle", "strategy_note", "unregister_strategy",
    "vote_facts", "votes_by_strategy", "votes_per_model", "votes_per_pair", "votes_per_prompt",
]


def _discover_strategies() -> None:
    """Import this package's other modules once, so a strategy declared in ``sampling/<name>.py`` registers itself
    whoever imports :mod:`sampling` first (the server, the simulation, the leaderboard worker)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_discover_strategies()
