"""Rating protocols as declarations: one file per protocol over the project's one vote format, one registry.

A rating protocol turns a battle log (:class:`ratings.votes.EncodedVotes`, in the order the votes were cast) into a
result table (:data:`ratings.protocols.base.RESULT_COLUMNS`: model, rating, lower, upper, rank, votes, ..., printed,
protocol). Each one's docstring and class attributes state how it treats ties, its penalty, scale, anchor, bootstrap
and rounding; the leaderboard (``--protocol``), its page and the docs list them from here.

======================  ==============================================================================================
``arena``               this arena's own fit, the default (:mod:`ratings.protocols.arena`)
``fastchat-2023``       FastChat / GenAI-Arena / WildVision 2023: scikit-learn's default logistic regression
``fastchat-2024``       FastChat since September 2024: unique rows, SciPy Bradley–Terry, multinomial bootstrap
``taxonomy-paper``      the taxonomy paper's Tables 3–6: no penalty, ties and both-bad one win each way, truncated
``online-elo``          online Elo, K = 4, in time order
``lmarena-2025``        LMArena since July 2025: pair-reweighted Bradley–Terry, sandwich (CLT) intervals
======================  ==============================================================================================

Adding one: a file here with a frozen dataclass subclass of :class:`RatingProtocol` (its settings as fields, its six
choices as class attributes, its math in ``fit``) and one entry in :data:`BUILT_IN_PROTOCOLS`; or, in a package of
your own, a module that registers it in :data:`core.protocols.PROTOCOLS`, named by an entry point of the group
``t2i_arena.rating_protocols``. Everything else asks that registry.

    >>> from core.protocols import get_protocol
    >>> table = get_protocol("taxonomy-paper").rate_frame(votes)   # votes: model_a, model_b, outcome, in order
"""

from __future__ import annotations

from ratings.protocols.arena import Arena
from ratings.protocols.base import CHOICES, RESULT_COLUMNS, ProtocolFit, RatingProtocol, empty_result
from ratings.protocols.fastchat_2023 import FastChat2023
from ratings.protocols.fastchat_2024 import FastChat2024
from ratings.protocols.lmarena_2025 import LMArena2025
from ratings.protocols.online_elo import OnlineElo
from ratings.protocols.taxonomy_paper import TaxonomyPaper

DEFAULT_PROTOCOL = "arena"
# in the order the leaderboard's menu lists them; core.protocols.PROTOCOLS registers them (and the plug-ins' after)
BUILT_IN_PROTOCOLS: tuple[RatingProtocol, ...] = (Arena(), FastChat2023(), FastChat2024(), TaxonomyPaper(), OnlineElo(),
                                                  LMArena2025())


__all__ = ["BUILT_IN_PROTOCOLS", "CHOICES", "DEFAULT_PROTOCOL", "RESULT_COLUMNS", "Arena", "FastChat2023",
           "FastChat2024", "LMArena2025", "OnlineElo", "ProtocolFit", "RatingProtocol", "TaxonomyPaper", "empty_result"]
