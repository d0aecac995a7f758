"""Which battle comes next: the strategies' declarations and maths (:mod:`~sampling.strategies`, pure; a new
strategy is one :class:`Strategy` in the registry :data:`STRATEGIES`), the prompt pool and the uniform draw
(:mod:`~sampling.draws`), a server's vote counts and the draws of the pair-first strategies (:mod:`~sampling.sampler`),
and the admin's tables of where the votes went (:mod:`~sampling.coverage`)."""

from sampling.coverage import strategy_note, votes_by_strategy, votes_per_model, votes_per_pair, votes_per_prompt
from sampling.draws import NoBattleAvailable, PromptPool, draw_uniform, serve_battle
from sampling.sampler import Replica, SamplingStats, UniformDraw, draw_pairing, read_count_tables, vote_facts
from sampling.strategies import (
                                 STRATEGIES,
                                 SamplingParams,
                                 Strategy,
                                 active_pair_weights,
                                 check_strategy,
                                 fit_state,
                                 get_strategy,
                                 misorder_probabilities,
                                 model_votes,
                                 n_models_of,
                                 pair_index,
                                 pair_probabilities,
                                 pair_votes,
)

__all__ = [
    "NoBattleAvailable", "PromptPool", "Replica", "STRATEGIES", "SamplingParams", "SamplingStats", "Strategy",
    "UniformDraw", "active_pair_weights", "check_strategy", "draw_pairing", "draw_uniform", "fit_state",
    "get_strategy", "misorder_probabilities", "model_votes", "n_models_of", "pair_index", "pair_probabilities",
    "pair_votes", "read_count_tables", "serve_battle", "strategy_note", "vote_facts", "votes_by_strategy",
    "votes_per_model", "votes_per_pair", "votes_per_prompt",
]

