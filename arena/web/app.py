"""Build and serve the web app: the Gradio page mounted on a FastAPI app, behind front doors that serve battle
images and admins' exports."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

import gradio as gr
from fastapi import FastAPI

from arena.demo.seeding import demo_prompt_ids
from arena.open_prompts import open_prompts_from_settings
from arena.rendition_keeper import RenditionKeeper
from arena.web.admin_session import AdminSessions, Holder
from arena.web.admin_tab import build_admin_tab
from arena.web.arena_tab import build_arena_tab
from arena.web.assets import HEAD_SCRIPTS, STYLESHEETS, json_element
from arena.web.context import AppContext
from arena.web.early_script import EarlyScript
from arena.web.forwarding import TrustedForwarding, warn_untrusted_proxy
from arena.web.four_image import build_four_image_tab
from arena.web.front_door import FrontDoor, request_cookie
from arena.web.gradio_guards import (
    keep_signed_in_sessions,
    light_sessions,
    queue_survives_lost_sessions,
    quiet_refusals,
)
from arena.web.leaderboard_tab import LEADERBOARD_POLL_S, build_leaderboard_tab, header_tip_table
from arena.web.ratings_tab import answer_rows_css, build_ratings_tab, rating_keys
from core.settings import Settings
from datamodel.annotators import sync_accounts
from datamodel.battles import ShownImage, battle_pair
from datamodel.connection import Store
from datamodel.human_ratings import rating_image
from datamodel.kwise import kwise_image
from datamodel.media import MediaStore
from datamodel.renditions import Renditions, band_warning, withdraw

# WCAG 2.2 AA asks 4.5:1 between text and its background (tests/test_browser_accessibility.py runs axe-core on every
# tab). Gradio's default draws white on orange-500 (2.8:1), white on red-500 (3.8:1) and its softer text, the
# footer's and our greyed rows', in zinc-400 (1.9:1). The same hues, darker: white on orange-700 is 5.2:1 (its
# hover orange-800, 7.3:1), white on red-700 6.5:1, zinc-600 on white 7.7:1 (on the tables' zinc-50 stripes 7.4:1).
CONTRAST = dict(
    button_primary_background_fill="*primary_700", button_primary_background_fill_hover="*primary_800",
    button_primary_border_color="*primary_700", button_primary_border_color_hover="*primary_800",
    button_cancel_background_fill=gr.themes.colors.red.c700,
    button_cancel_background_fill_hover=gr.themes.colors.red.c800,
    button_cancel_border_color=gr.themes.colors.red.c700, button_cancel_border_color_hover=gr.themes.colors.red.c800,
    body_text_color_subdued="*neutral_600",
    color_accent="*primary_700",  # the selected tab's name (orange-500 on white: 2.8:1)
)


def page_theme() -> gr.themes.Base:
    """Gradio's default theme with fonts that render every weight the page uses.

    The default theme loads Source Sans Pro and IBM Plex Mono in weights 400 and 600, and the 600 files Gradio ships
    are stubs of a few kilobytes with a handful of glyphs: bold text (every button, heading and table header) mixed
    two typefaces, the missing glyphs drawn by a fallback font. The theme loads the complete 400 and 700 files
    instead; CSS then draws weight 600 with the 700 face (the nearest heavier one), and every glyph comes from one
    font (tests/test_browser_layout.py checks each weight the page uses).
    """
    theme = gr.themes.Default(
        font=(gr.themes.LocalFont("Source Sans Pro", weights=(400, 700)), "ui-sans-serif", "system-ui", "sans-serif"),
        font_mono=(gr.themes.LocalFont("IBM Plex Mono", weights=(400, 700)), "ui-monospace", "Consolas", "monospace"))
    return theme.set(**CONTRAST)


_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
MEDIA_CACHE_BYTES = 64 * 1024 * 1024  # battle image bytes kept in memory per server process
EXPORT_CHUNK_BYTES = 1024 * 1024  # an admin's export is streamed this many bytes at a time
GRADIO_CACHE_CLEANUP = (600, 3600)  # every 10 minutes, delete Gradio cache files older than an hour
QUEUE_MAX_EVENTS = 1000  # events waiting in Gradio's queue at once
log = logging.getLogger(__name__)


def make_context(settings: Settings, store: Store | None = None) -> AppContext:
    """What the app's handlers share, over the database of ``settings`` (or ``store``); accounts synced."""
    store = store or Store(settings.database, synchronous=settings.sqlite_synchronous)
    sync_accounts(store.db(), settings.annotator_accounts)
    ctx = AppContext(settings=settings, store=store, media=MediaStore.from_settings(settings))
    ctx.open_prompts = open_prompts_from_settings(settings, store, ctx.media, Renditions.from_settings(ctx.media,
                                                  settings), has_demo=bool(demo_prompt_ids(store.db())),
                                                  sampler=ctx.sampler)
    return ctx


def your_board(session) -> list:
    """The reveal's "See your own leaderboard": the Leaderboard tab, its Voter menu on the signed-in annotator (whose
    own results the menu offers them alone)."""
    name = getattr(getattr(session, "annotator", None), "name", None)
    if not isinstance(name, str):
        return [gr.skip(), gr.skip(), gr.skip()]
    return [gr.Tabs(selected="leaderboard"), gr.update(value=name), gr.Timer(active=True)]


def build_app(settings: Settings, store: Store | None = None, ctx: AppContext | None = None) -> gr.Blocks:
    """The arena as a Gradio Blocks app over ``ctx`` (default: :func:`make_context` of ``settings`` and ``store``)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # Gradio's queue recomputes a pandas summary of up to 10,000 past events after every event by default; under
    # load that, not the arena, dominated the server's time. Summarise rarely and over few events.
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000")
    os.environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", "1000")
    ctx = ctx or make_context(settings, store)
    # Files Gradio hands out live in its cache, open to any client with the address; drop them after an hour (and
    # all of them at a restart). No vote export goes there: exports have their own one-time route (AdminExports).
    with gr.Blocks(title="T2I Arena", analytics_enabled=False, delete_cache=GRADIO_CACHE_CLEANUP) as blocks:
        blocks.state_session_capacity = settings.page_sessions  # Gradio's holder reads it when the app is mounted
        # the page's name alone over every tab: each tab says what it asks for itself (the Arena's question is in
        # its sign-in form, "How it works"; the Ratings tab asks about one image at a time)
        gr.Markdown("# Text-to-image arena", elem_id="page-title")
        # While the leaderboard tab is open it asks for the latest snapshot every few seconds (one small query).
        timer = gr.Timer(LEADERBOARD_POLL_S, active=False)
        # This page's admin session id once its Admin tab is unlocked; the leaderboard reads it too (an annotator's
        # results are the admin's to see), as it reads who signed in on the Arena tab.
        admin = gr.State(None)
        # every tab in view on a phone, on two rows if need be: Gradio's default hid Leaderboard and Admin behind a
        # "•••" menu whenever the web font had not arrived (the browser's own font is wider)
        with gr.Tabs(overflow_behavior="wrap") as tabs:
            with gr.Tab("Arena", id="arena") as arena_tab, signed_in_events(blocks, ctx):
                arena = build_arena_tab(ctx)
            with gr.Tab("Ratings", id="ratings") as ratings_tab, signed_in_events(blocks, ctx):
                build_ratings_tab(ctx)
            four_tabs = []
            if ctx.settings.four_image_suite_names:  # the four-image mode (arena.web.four_image)
                with gr.Tab("Four images", id="four") as four_tab, signed_in_events(blocks, ctx):
                    build_four_image_tab(ctx, four_tab, arena.state)
                four_tabs.append(four_tab)
            with gr.Tab("Leaderboard", id="leaderboard") as leaderboard_tab:
                voter_menu = build_leaderboard_tab(ctx, leaderboard_tab, timer, arena.state, admin)
            with gr.Tab("Admin", id="admin") as admin_tab, signed_in_events(blocks, ctx):
                build_admin_tab(ctx, admin)
        leaderboard_tab.select(lambda: gr.Timer(active=True), None, timer, api_visibility="private")
        for other in (arena_tab, ratings_tab, admin_tab, *four_tabs):
            other.select(lambda: gr.Timer(active=False), None, timer, api_visibility="private")

        with signed_in_events(blocks, ctx):  # the reveal's "See your own leaderboard"
            arena.your_board.click(your_board, arena.state, [tabs, voter_menu, timer], api_visibility="private")
    # api_open=False: an event that goes through the queue cannot be posted straight to /gradio_api/run/predict by
    # its fn_index, which would skip the queue's concurrency limits (the votes and battles, queue=False, still can).
    # At most QUEUE_MAX_EVENTS events wait at once; past them a join is refused (503) instead of held in memory.
    blocks.queue(default_concurrency_limit=8, api_open=False, max_size=QUEUE_MAX_EVENTS)
    queue_survives_lost_sessions(blocks._queue)
    quiet_refusals(blocks)
    return blocks


def page_data(db) -> str:
    """What the page's scripts read from the server, first in the page's head: the rating tasks' keys
    (``#rating-keys``) and the leaderboard's header tooltips (``#lb-header-tips``)."""
    return json_element("rating-keys", rating_keys()) + json_element("lb-header-tips", header_tip_table(db))


@contextlib.contextmanager
def signed_in_events(blocks: gr.Blocks, ctx: AppContext):
    """The events wired meanwhile need a signed-in page (a session the server holds: the front door refuses them
    without one), except the page's load events and ``ctx.opening_events`` (signing in, unlocking)."""
    before = set(blocks.fns)
    yield
    for index in set(blocks.fns) - before:
        fn = blocks.fns[index]
        if fn.api_name not in ctx.opening_events and not any(trigger == "load" for _, trigger in fn.targets):
            ctx.session_events.add(index)


class ByteCache:
    """A thread-safe least-recently-used cache of file contents, bounded by their total size in bytes.

    A file larger than the whole budget is read but never kept. Files are content-addressed (renditions by the
    original's hash and their settings) and never change, so a cached copy is never stale.
    """

    def __init__(self, max_bytes: int = MEDIA_CACHE_BYTES):
        self.max_bytes, self.size = max_bytes, 0
        self._items: OrderedDict[Path, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Path) -> bytes | None:
        """The bytes kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            body = self._items.get(key)
            if body is not None:
                self._items.move_to_end(key)
            return body

    def put(self, key: Path, body: bytes) -> None:
        """Keep ``body`` for ``key`` unless it is larger than the whole budget; drop the least recently used."""
        if len(body) > self.max_bytes:
            return
        with self._lock:
            if key not in self._items:
                self._items[key] = body
                self.size += len(body)
            while self.size > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self.size -= len(dropped)

    def read(self, path: Path) -> bytes:
        """The bytes of ``path``, from memory when they are there; raises OSError when the file cannot be read."""
        body = self.get(path)
        if body is None:
            body = path.read_bytes()
            self.put(path, body)
        return body

    def __len__(self) -> int:
        return len(self._items)


class BattlePairs:
    """The two images of a battle by its media token, read once for both sides: a page asks for image A and then
    image B, and the second request finds the pair kept (the last ``size`` battles' pairs; a token's images never
    change)."""

    def __init__(self, size: int = 4096):
        self.size = size
        self._pairs: OrderedDict[str, tuple[ShownImage, ShownImage]] = OrderedDict()
        self._lock = threading.Lock()

    def image(self, db, token: str, side: str) -> ShownImage | None:
        """The image on ``side`` ("a" or "b") of the battle with media ``token``, or None."""
        if side not in ("a", "b"):
            return None
        with self._lock:
            pair = self._pairs.get(token)
        if pair is None:
            pair = battle_pair(db, token)
            if pair is None:
                return None
            with self._lock:
                self._pairs[token] = pair
                if len(self._pairs) > self.size:
                    self._pairs.popitem(last=False)
        return pair[side == "b"]


class BattleMedia:
    """ASGI front door: ``GET .../battle-media/<token>/<a|b>`` answers a battle image (``.../kwise-media/<token>/<1-4>``
    a four-image battle's, :mod:`arena.web.four_image`, and ``.../rating-media/<token>`` a rating question's image,
    :mod:`arena.web.ratings_tab`), anything else goes to the app.

    Images are reachable only through a battle's (or a rating question's) unguessable media token, which only the
    session it was served to receives; a token answers its images and nothing else, and does not expire (the page
    keeps showing the images after the answer). The media folder itself is never exposed, so no path can be
    traversed. What is answered is the image's display rendition (:mod:`datamodel.renditions`): one size, format and
    padded length for every model, no metadata, so nothing but the pixels tells the two sides apart; the original
    never reaches the browser. The images are answered here, before Gradio's middleware stack (CORS, Brotli, ...),
    which cost more than the vote itself under load; renditions never change, so their bytes are cached
    (:class:`ByteCache`, at most ``cache_bytes`` in all). A rendition is never made here: battles and rating
    questions draw only rendered images (:mod:`datamodel.renditions`), since one made while the voter waits would
    name the model by its timing. A rendition file gone missing answers 404 and its image is withdrawn from battles
    and rating questions until rendered again.
    """

    def __init__(self, app, store: Store, renditions: Renditions, cache_bytes: int = MEDIA_CACHE_BYTES):
        self.app, self.store, self.renditions = app, store, renditions
        self.cache = ByteCache(cache_bytes)
        self.pairs = BattlePairs()

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if "/battle-media/" in path:
            token, _, side = path.rpartition("/battle-media/")[2].partition("/")
            shown = self.pairs.image(self.store.db(), token, side) if _TOKEN.match(token) else None
        elif "/kwise-media/" in path:  # a four-image battle's image (arena.web.four_image), the same way
            token, _, slot = path.rpartition("/kwise-media/")[2].partition("/")
            shown = kwise_image(self.store.db(), token, slot) if _TOKEN.match(token) else None
        elif "/rating-media/" in path:  # a rating question's image (arena.web.ratings_tab), the same way
            token = path.rpartition("/rating-media/")[2]
            shown = rating_image(self.store.db(), token) if _TOKEN.match(token) else None
        else:
            return await self.app(scope, receive, send)
        if shown is None or scope["method"] != "GET":
            return await _answer(send, 404, b"Unknown image.", "text/plain")
        try:
            body = await self._rendition(shown.media_hash)
        except OSError as error:
            withdrawn = await asyncio.to_thread(withdraw, self.store.db(), shown.media_hash)
            log.error("the display rendition of image %s (image id %s) is missing: %s. %d image(s) of that file "
                      "are left out of battles until it is rendered again (the server renders it again from its "
                      "original within seconds if that can be read; else re-import it).", shown.media_hash,
                      shown.image_id, error, withdrawn)
            return await _answer(send, 404, b"Image not available.", "text/plain")
        await _answer(send, 200, body, self.renditions.spec.media_type, cache="private, max-age=86400")

    async def _rendition(self, media_hash: str) -> bytes:
        """The rendition's bytes, from memory or read from its file off the event loop; never made here."""
        key = self.renditions.path(media_hash)
        body = self.cache.get(key)
        return body if body is not None else await asyncio.to_thread(self.cache.read, key)


class AdminExports:
    """ASGI front door: ``GET .../admin-export/<token>`` streams an admin's vote export once, anything else goes on.

    The export event (:mod:`arena.web.admin_tab`) writes the file into the admin session's private folder and offers
    it under a random token (:meth:`arena.web.admin_session.AdminSessions.offer`) that only its answer to that page
    carries. The token is claimed before the first byte is sent, so it works once, however many requests race for
    it; it works only while the admin session lives, within its time, and for the address and browser that asked for
    the export. Any other request here (an unknown, used or expired token, another method, another holder: the link
    stays usable for its admin) is a 404 that says nothing more. The
    file is sent ``chunk_bytes`` at a time, read off the event loop (the server's memory does not grow with the
    export), as an attachment that no cache keeps. The file leaves the folder as soon as it is opened, before the
    first byte is sent, and its space is freed when the response ends, finished or not.
    """

    def __init__(self, app, admins: AdminSessions, chunk_bytes: int = EXPORT_CHUNK_BYTES):
        self.app, self.admins, self.chunk_bytes = app, admins, chunk_bytes

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if "/admin-export/" not in path:
            return await self.app(scope, receive, send)
        token = path.rpartition("/admin-export/")[2]
        holder = Holder((scope.get("client") or ("unknown",))[0], request_cookie(scope["headers"]))
        offer = self.admins.claim(token, holder) if scope["method"] == "GET" and _TOKEN.match(token) else None
        if offer is None:
            return await _answer(send, 404, b"Not found.", "text/plain")
        try:
            handle = open(offer.path, "rb")
        except OSError:
            return await _answer(send, 404, b"Not found.", "text/plain")
        finally:
            offer.path.unlink(missing_ok=True)  # gone from the folder now; the open handle still reads it
        gone = asyncio.Event()

        async def watch() -> None:  # the client going away ends the download
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.ensure_future(watch())
        try:
            headers = [(b"content-type", offer.media_type.encode()),
                       (b"content-length", str(os.fstat(handle.fileno()).st_size).encode()),
                       (b"content-disposition", f'attachment; filename="{offer.name}"'.encode()),
                       (b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            while not gone.is_set():
                chunk = await asyncio.to_thread(handle.read, self.chunk_bytes)
                if not chunk:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    break
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            watcher.cancel()
            handle.close()  # the last reference: the file's space is freed


async def _answer(send, status: int, body: bytes, media_type: str, cache: str = "no-store") -> None:
    headers = [(b"content-type", media_type.encode()), (b"content-length", str(len(body)).encode()),
               (b"cache-control", cache.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def skip_matplotlib_backend_switch() -> bool:
    """Make Gradio's per-event matplotlib backend switch a no-op where matplotlib is not installed; True if it did.

    Gradio 6 wraps every event in ``gradio.utils.MatplotlibBackendMananger``, which tries ``import matplotlib`` on
    entering and on leaving. This project draws with plotly and installs no matplotlib, and a failed import is not
    cached, so each try searches ``sys.path`` again: about 4% of the server's CPU under the load test. Without
    matplotlib there is no backend to switch, so a null context does the same.
    """
    import contextlib
    import importlib.util

    if importlib.util.find_spec("matplotlib") is not None or not hasattr(gr.utils, "MatplotlibBackendMananger"):
        return False
    gr.utils.MatplotlibBackendMananger = contextlib.nullcontext  # type: ignore[misc, assignment]  # Gradio's class, replaced
    return True


def create_server(settings: Settings):
    """The whole web app as an ASGI application: forwarded headers believed only from trusted proxies
    (:class:`arena.web.forwarding.TrustedForwarding`), the front door (:class:`arena.web.front_door.FrontDoor`:
    request bodies, events, the browser cookie), battle images (:class:`BattleMedia`), admin exports
    (:class:`AdminExports`) and the Gradio page, with a script of ours first in its HTML
    (:class:`arena.web.early_script.EarlyScript`: the frame budget of Gradio's orphaned status-tracker loop)."""
    skip_matplotlib_backend_switch()
    light_sessions()
    store = Store(settings.database, synchronous=settings.sqlite_synchronous)
    store.checkpoint_in_background()
    if settings.change_log_keep_s > 0:
        store.prune_change_logs_in_background(settings.change_log_keep_s)
    ctx = make_context(settings, store)
    renditions = Renditions.from_settings(ctx.media, settings)
    bands = band_warning(store.db(), renditions.spec)
    if bands:
        log.warning(bands)
    ctx.renditions = RenditionKeeper(store, renditions)
    ctx.renditions.start()  # every image rendered for these settings before the first request
    ctx.snapshots.warm_up()  # the leaderboard worker starts beside the server, not at the first viewer
    blocks = build_app(settings, ctx=ctx)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        yield
        ctx.close()

    app = gr.mount_gradio_app(
        FastAPI(openapi_url=None, docs_url=None, redoc_url=None, lifespan=lifespan), blocks, path="/",
        server_name=settings.host, server_port=settings.port,
        head=page_data(ctx.store.db()), head_paths=list(HEAD_SCRIPTS),  # the page's scripts: arena.web.assets
        css=answer_rows_css(), css_paths=list(STYLESHEETS),
        theme=page_theme(),
        footer_links=["api"], run_history=False,
    )  # no allowed_paths: Gradio would serve those folders to anyone (admin exports have their own route)
    keep_signed_in_sessions(blocks.state_holder)
    served = BattleMedia(AdminExports(EarlyScript(app), ctx.admins), ctx.store, renditions)
    door = FrontDoor(served, blocks, session_events=ctx.session_events, pages=ctx.page_limit,
                     max_body=settings.max_request_bytes)
    warn_untrusted_proxy(settings.trusted_proxy_hosts)
    return TrustedForwarding(door, settings.trusted_proxy_hosts)


# On SIGTERM, open connections get this many seconds to finish; then they are closed and the app's shutdown runs
# (ending admin sessions, deleting exports). uvicorn's default waits for them forever, and a page's event streams
# stay open while its tab does: the server then never stopped by itself, and was killed without its shutdown.
SHUTDOWN_GRACE_S = 3


def server_config(settings: Settings, app=None):
    """uvicorn's configuration for ``app`` (default: :func:`create_server` of ``settings``).

    uvicorn's own forwarded-header handling is off: the app believes forwarded headers only from the proxies named in
    ``trusted_proxies`` and removes them from every other request (:class:`arena.web.forwarding.TrustedForwarding`).
    uvicorn's default believes them from any loopback client, so a client on this machine (or a proxy that passes
    the header through) could pick the address that the per-address limits count, and the host the page talks to.
    """
    import uvicorn

    return uvicorn.Config(app if app is not None else create_server(settings), host=settings.host,
                          port=settings.port, log_level="warning", proxy_headers=False,
                          timeout_graceful_shutdown=SHUTDOWN_GRACE_S)


def serve(settings: Settings) -> None:
    """Run the app until SIGINT or SIGTERM; its shutdown ends the admin sessions and deletes their exports."""
    import uvicorn

    uvicorn.Server(server_config(settings)).run()
