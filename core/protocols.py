"""The rating protocols' registry: :mod:`ratings.protocols`' built-ins, then the plug-ins of the entry-point group
``t2i_arena.rating_protocols``.

The protocols' maths lives on the ratings floor, which imports nothing of the project (not even this one); so their
built-ins are registered here, from :data:`ratings.protocols.BUILT_IN_PROTOCOLS`, and a plug-in's module declares its
own the way every other kind does::

    from core.protocols import PROTOCOLS
    from ratings.protocols import RatingProtocol

    @dataclass(frozen=True)
    class Glicko(RatingProtocol):
        name = "glicko"
        ...

    PROTOCOLS.register(Glicko())

Everything that lists protocols asks :data:`PROTOCOLS`: ``python -m arena leaderboard --protocol``, the
leaderboard page's menu, the reports.
"""

from __future__ import annotations

from core.registry import Registry
from ratings.protocols import BUILT_IN_PROTOCOLS, RatingProtocol

PROTOCOLS = Registry[RatingProtocol]("rating_protocols", (), what="rating protocol",
                                     hint="(docs/methods/rating-protocols.md says what each does)")
for _protocol in BUILT_IN_PROTOCOLS:
    PROTOCOLS.register(_protocol)


def get_protocol(name: str, **settings) -> RatingProtocol:
    """The protocol called ``name`` with its source's settings, or with ``settings`` changed (e.g. ``rounds=10``);
    an unknown name raises :class:`core.registry.RegistryError` (a ValueError) listing the choices."""
    protocol = PROTOCOLS[name]
    return protocol.with_settings(**settings) if settings else protocol
