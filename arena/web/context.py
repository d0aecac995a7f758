"""What every tab's handlers share: the settings, the database, the media folder, a random source, the sampler's
statistics, the rate limiters and sign-in throttles, the admin sessions and the leaderboard snapshots; how a handler
refuses a request (:func:`refusal`) or tells that the database took no write (:func:`unwritable`); and :func:`bind`,
which hands a tab's handler, written at module level, the context its event calls it with.

Built once per app by :func:`arena.web.app.make_context` and handed to the handlers by :func:`bind`; no module-level
state.
"""

from __future__ import annotations

import functools
import html
import inspect
import logging
import os
import random
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr

from arena.leaderboard.compute import leaderboard_options
from arena.leaderboard.service import SnapshotService
from arena.ratelimit import LoginThrottle, RateLimited, RateLimiter, client_address
from arena.rendition_keeper import RenditionKeeper
from arena.session import Sampler
from arena.web.admin_session import AdminSessions
from core.settings import Settings
from datamodel.connection import Store
from datamodel.media import MediaStore
from sampling.kwise_stats import KwiseStats
from sampling.prompt_pool import PromptPool
from sampling.sampler import SamplingStats
from sampling.strategies import SamplingParams

# Both tabs' sign-ins share one queue slot group: at most this many tokens are checked at once (each an scrypt hash of
# 16 MiB and tens of milliseconds), the rest wait their turn in Gradio's queue. So a burst of sign-ins costs the
# server at most this many hashes' memory and half its cores at once, votes keep the other half (before, 5 wrong
# sign-ins from each of 40 addresses took a voter's median vote from 8 ms to 234 ms on two cores), and a burst of
# guesses spread over many accounts from one address is checked at most ARENA_LOGIN_MAX_FAILURES + this - 1 times
# (arena.ratelimit).
SIGN_IN_CONCURRENCY = max(1, (os.cpu_count() or 2) // 2)
SIGN_IN_QUEUE = {"concurrency_limit": SIGN_IN_CONCURRENCY, "concurrency_id": "sign-in"}


@dataclass
class AppContext:
    settings: Settings
    store: Store
    media: MediaStore
    rng: random.Random = field(default_factory=random.SystemRandom)
    pool: PromptPool = field(default_factory=PromptPool)
    stats: SamplingStats = field(init=False)  # the sampler's counts and fit, shared by the server's threads
    kwise_stats: KwiseStats = field(default_factory=KwiseStats)  # the four-image sampler's, likewise
    annotator_limit: RateLimiter = field(init=False)
    client_limit: RateLimiter = field(init=False)
    skip_limit: RateLimiter = field(init=False)  # battles loaded without a vote, per annotator
    client_skip_limit: RateLimiter = field(init=False)  # the same, per client address
    page_limit: RateLimiter = field(init=False)  # new pages (Gradio sessions) per client address, at the front door
    # events a signed-out page may send (signing in, unlocking the admin tab) in a tab whose other events all need a
    # signed-in page: the tabs add them; arena.web.app.signed_in_events marks the others (arena.web.front_door)
    opening_events: set[str] = field(default_factory=set)
    session_events: set[int] = field(default_factory=set)  # ids of the events that need a session the server holds
    sign_in_throttle: LoginThrottle = field(init=False)
    admin_throttle: LoginThrottle = field(init=False)
    admins: AdminSessions = field(default_factory=AdminSessions)
    snapshots: SnapshotService = field(init=False)  # leaderboards, computed in a worker process
    renditions: RenditionKeeper | None = None  # the server's display renditions (create_server starts it)
    open_prompts: Any = None  # arena.open_prompts.OpenPrompts when the arena serves open prompts (make_context)

    @functools.cached_property
    def guidelines(self) -> dict:
        """The annotators' guidelines per suite: the file ``ARENA_GUIDELINES_FILE`` names, else the built-in ones
        (:func:`arena.web.render.load_guidelines`); read once (the arena tab reads it when the page is built)."""
        from arena.web.render import load_guidelines

        return load_guidelines(Path(self.settings.guidelines_file) if self.settings.guidelines_file else None)

    @property
    def sampler(self) -> Sampler:
        return Sampler(self.settings.sampling_strategy, self.stats, self.pool, self.settings.replication_share)

    def __post_init__(self):
        self.stats = SamplingStats(SamplingParams(tie_policy=self.settings.tie_policy,
                                                  warmup_battles=self.settings.warmup_battles,
                                                  warmup_share=self.settings.warmup_share))
        shared = self.store if self.store.postgres else None  # replicas on one database count together
        self.annotator_limit = RateLimiter(self.settings.rate_limit_annotator_per_minute, "per annotator", store=shared)
        self.client_limit = RateLimiter(self.settings.rate_limit_client_per_minute, "from one address", store=shared)
        skips = dict(noun="new battles", advice="Vote on the battle on screen, or load another", store=shared)
        self.skip_limit = RateLimiter(self.settings.rate_limit_skips_per_minute, "per annotator", **skips)
        self.client_skip_limit = RateLimiter(self.settings.rate_limit_client_per_minute, "from one address", **skips)
        self.page_limit = RateLimiter(self.settings.rate_limit_pages_per_minute, "from one address", noun="new pages",
                                      advice="Go on in a page you have open, or open this one again", store=shared)
        self.sign_in_throttle = LoginThrottle.from_settings("sign-ins", self.settings, store=shared)
        self.admin_throttle = LoginThrottle.from_settings("admin sign-ins", self.settings, store=shared)
        if shared is not None:
            self.admins.attach(shared)  # admin sessions and export links hold on every replica
        self.snapshots = SnapshotService(self.store, refresh_s=self.settings.leaderboard_refresh_s,
                                         keep=self.settings.leaderboard_views,
                                         history_days=self.settings.leaderboard_history_days,
                                         history_defaults=leaderboard_options(self.settings),
                                         niceness=self.settings.leaderboard_worker_nice)
        if self.sampler.reads_stats:  # also checks ARENA_SAMPLING against the registered strategies
            self.stats.start(self.store.db())  # the one full read of the vote counts, on a background thread
        if self.settings.four_image_suite_names and self.settings.four_image_strategy == "ksort-ucb":
            self.kwise_stats.start(self.store.db())  # the four-image sampler's, likewise

    def close(self) -> None:
        """Stop what the app started besides its request threads: the leaderboard worker process, the checkpoints,
        the rendition keeper;
        end the admin sessions and delete their export folder."""
        self.admins.close()
        self.snapshots.close()
        if self.open_prompts is not None:
            self.open_prompts.close()
        if self.renditions is not None:
            self.renditions.close()
        self.store.close()


log = logging.getLogger("arena.web")


def throttled_sign_in(ctx: AppContext, request, name: str, start):
    """``start()`` (a sign-in of ``name`` by either tab: :func:`arena.session.start` or
    :func:`arena.rating_session.start`) under the sign-in throttle of ``request``'s address: a wrong token is a failed
    guess, input refused before any token is checked (``SignInError.guess`` false: no token, a token too short to
    sign up with, a name that is not allowed) counts nothing. Raises what ``start`` raises, or
    :class:`arena.ratelimit.RateLimited`."""
    from datamodel.annotators import SignInError

    with ctx.sign_in_throttle.attempt(client_address(request), account=name) as attempt:
        try:
            signed = start()
        except SignInError as error:
            if not error.guess:
                attempt.not_a_guess()
            raise
        attempt.succeeded()
        return signed


def done(text: str) -> str:
    """An admin action's confirmation, as the admin tab shows it (a green line)."""
    return f'<span class="admin-done">✓ {html.escape(text)}</span>'


def refused_text(text: str) -> str:
    """Why an admin action was not taken, as the admin tab shows it (an amber line); the tables stay as they are."""
    return f'<span class="admin-refused">⚠ {html.escape(text)}</span>'


UNWRITABLE = ("The server cannot save {what} right now (its database cannot be written). Try again in a minute; if "
              "it lasts, tell the arena's admin.")


def unwritable(error: BaseException, event: str, request=None, what: str = "votes") -> str:
    """What a handler tells the user when the database took no write (a full disk, a read-only file or server, a
    write the database refused): the words above about ``what``, never the database's own; the server log gets one
    line with the database's reason and what to check, never a traceback. Handlers catch
    :func:`datamodel.connection.database_errors`, either engine's."""
    log.error("refused %s from %s: the database did not take the write (%s: %s); check its free disk space, its "
              "permissions and that it is not read-only", event, client_address(request), type(error).__name__,
              " ".join(str(error).split())[:300])
    return UNWRITABLE.format(what=what)


def bind(context, handler, name: str | None = None, **fixed):
    """``handler(context, *inputs, **fixed)`` as the function an event calls with its inputs alone.

    A tab's handlers are written at module level and take the context first (and, keyword-only, what one event of
    several fixes: the vote's outcome, the export's format); the event gets this function, whose signature and type
    hints are the handler's without them. Gradio reads both on every call, to hand a parameter annotated
    ``gr.Request`` the request, and names the event after the function: it is called ``name`` (default: the
    handler's name). A coroutine handler gives a coroutine function.
    """
    signature = inspect.signature(handler)
    kept = [parameter for parameter in list(signature.parameters.values())[1:] if parameter.name not in fixed]
    event: Any  # a function given a signature, annotations and a name below
    if inspect.iscoroutinefunction(handler):
        async def coroutine_event(*inputs, **named):
            return await handler(context, *inputs, **named, **fixed)
        event = coroutine_event
    else:
        def plain_event(*inputs, **named):
            return handler(context, *inputs, **named, **fixed)
        event = plain_event
    try:  # resolved once here, so Gradio does not evaluate string annotations on every call
        hints = typing.get_type_hints(handler)
    except (NameError, TypeError):
        hints = dict(handler.__annotations__)
    names = {parameter.name for parameter in kept} | {"return"}
    event.__signature__ = signature.replace(parameters=kept)
    event.__annotations__ = {key: hint for key, hint in hints.items() if key in names}
    event.__name__ = event.__qualname__ = name or handler.__name__
    event.__module__, event.__doc__ = handler.__module__, handler.__doc__
    return event


def refusal(error: Exception | str, event: str, request=None, *, warn: bool = False) -> gr.Error:
    """The error a handler raises to refuse a request: the page shows the message; the server log gets one line
    (event, client address, message), never a traceback. The line is a warning for a rate limit and where ``warn``
    says so (a wrong token or password), otherwise information."""
    message = str(error)
    level = logging.WARNING if warn or isinstance(error, RateLimited) else logging.INFO
    log.log(level, "refused %s from %s: %s", event, client_address(request), " ".join(message.split())[:300])
    return gr.Error(message, print_exception=False)


def picked_cell(table, event: gr.SelectData, column: str, kind=str):
    """The ``column`` value (as ``kind``) of the row a click on ``table`` (a DataFrame's select ``event``) chose;
    ``gr.skip()`` where the click names no such row."""
    row = event.index[0] if isinstance(event.index, (list, tuple)) else event.index
    try:
        return kind(table.iloc[int(row)][column])
    except (IndexError, KeyError, ValueError, TypeError):
        return gr.skip()
