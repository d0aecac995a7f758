"""Gradio's page sessions and queue, held to what the arena needs of them.

Gradio keeps a session for every page (or API client) that sends an event, in its ``StateHolder``: the values of
the page's ``gr.State`` components (who is signed in) and, from the start, a copy of the configuration of every
component, kept only for Gradio's deep links (a route the arena does not open). It keeps ``capacity`` sessions (the
arena's ``ARENA_PAGE_SESSIONS``, 4,000; Gradio's default is 10,000) and drops the least recently used. Its queue
keeps each session's undelivered messages in a bounded cache (2,000 sessions) and stops for good when it meets an
event whose session that cache dropped. Under a flood of new
sessions (the fourth security review) the sessions took 370 KB each (10,150 of them: 3.7 GB), pushed a signed-in
voter's session out, and stopped the queue (every sign-in then answered 503 until a restart). Here:

- :func:`light_sessions`: a session keeps no copy of the components' configuration, neither at its start nor for the
  values its handlers send (12 KB each instead of 370 KB at the start and 70 KB more per leaderboard view);
- :func:`keep_signed_in_sessions`: when the holder is full, the least recently used session *where nobody is signed
  in* goes first; a session with a signed-in annotator, rater or admin goes only when every session held is one;
- :func:`queue_survives_lost_sessions`: a message for a session whose message cache is gone is dropped (no one can
  read it any more) instead of stopping the queue, and queue-position estimates nobody reads do not pile up;
- :func:`quiet_refusals`: a request refused for its input (a value the page never offers, a number that is not one,
  a refusal a handler raises) is one log line, not a traceback (before: 21 of 114 unauthenticated event calls and
  1,159 requests of the queue flood wrote one each). A handler's own failure still writes its traceback.

Gradio's own classes are kept; each function changes one method of one object (or, for the first, which class the
holder makes), and says so if Gradio no longer has what it changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


def light_sessions() -> bool:
    """Make Gradio's new page sessions start without every component's configuration; True if it did now."""
    from gradio import state_holder

    original = state_holder.SessionState
    if getattr(original, "light", False):
        return False
    if not hasattr(state_holder, "StateHolder"):
        log.warning("gradio.state_holder has changed: page sessions keep Gradio's full size")
        return False

    class _OnlyTheConfig:
        """What ``SessionState.__init__`` reads of the Blocks: the default configuration, and no blocks, so it
        copies no component's configuration (it fills one in when a handler updates that component)."""

        def __init__(self, blocks):
            self.default_config, self.blocks = blocks.default_config, {}

    class LightSessionState(state_holder.SessionState):  # the original: replaced only below
        light = True

        def __init__(self, blocks):
            super().__init__(_OnlyTheConfig(blocks))
            self.config_values = _Unkept()

    state_holder.SessionState = LightSessionState  # type: ignore[misc]  # Gradio's class, replaced
    return True


class _Unkept(dict):
    """A session's copy of its components' configuration that keeps nothing: Gradio writes every value a handler
    sends into it (a leaderboard's tables and charts, about 70 KB a view) and reads it back only for deep links. It
    answers as if every component were there with no properties, so Gradio neither builds nor keeps one."""

    def __setitem__(self, key, value) -> None:
        pass

    def __contains__(self, key) -> bool:
        return True

    def __getitem__(self, key) -> dict:
        return {}


def holds_someone(session_state) -> bool:
    """Whether a Gradio session holds a signed-in person: a ``gr.State`` value that is a signed-in annotator's or
    rater's session (``signed_in``), or an admin session id (a string, :mod:`arena.web.admin_session`)."""
    for value in getattr(session_state, "state_data", {}).values():
        if getattr(value, "signed_in", False) is True or (isinstance(value, str) and value):
            return True
    return False


def keep_signed_in_sessions(holder, held: Callable[[object], bool] = holds_someone) -> None:
    """Make ``holder`` (Gradio's ``StateHolder``) drop, when full, its least recently used session for which
    ``held`` is false; one for which it is true goes only when all are (then the least recently used)."""
    data, lock = holder.session_data, holder.lock

    def update(session_id: str) -> None:
        with lock:
            if session_id in data:
                data.move_to_end(session_id)
            while len(data) > holder.capacity:
                _drop_one(holder, held, session_id)

    holder.update = update


def _drop_one(holder, held, keep: str) -> None:
    """Drop the least recently used session of ``holder`` that ``held`` says holds nobody (not ``keep``, the one in
    use); the held ones met on the way go to the end (recently used), so each is looked at once per round."""
    data = holder.session_data
    for _ in range(len(data)):
        oldest = next(iter(data))
        if oldest != keep and not held(data[oldest]):
            break
        data.move_to_end(oldest)
    else:
        oldest = next(key for key in data if key != keep)  # everyone is signed in: the least recently used goes
    del data[oldest]
    holder.time_last_used.pop(oldest, None)


UNREAD_ESTIMATES = 8  # messages a session may have waiting unread before its queue-position estimates are dropped


def queue_survives_lost_sessions(queue) -> None:
    """Make Gradio's ``queue`` drop a message whose session's message cache is gone, instead of raising the
    KeyError that ends its processing loop (after which every event is refused: "Queue is stopped"); and drop a
    queue-position estimate for a session that already has :data:`UNREAD_ESTIMATES` messages waiting unread.
    Gradio sends every waiting event an estimate each time any event starts, and keeps them until the page reads
    them: a client that never reads made that grow with the square of the queue (6,000 unread events from fresh pages
    left 451,000 estimates and took the server from 354 to 1,326 MB). A page that reads its stream has none waiting."""
    from gradio.server_messages import EstimationMessage

    send = queue.send_message

    def send_message(event, event_message):
        waiting = queue.pending_messages_per_session.get(event.session_hash)
        if waiting is None:
            return None  # nobody can read it: the page's stream went with the cache
        if isinstance(event_message, EstimationMessage) and waiting.qsize() >= UNREAD_ESTIMATES:
            return None  # nobody has read the ones before
        return send(event, event_message)

    queue.send_message = send_message


def quiet_refusals(blocks) -> None:
    """Make ``blocks`` (the app's Blocks) log a request refused for its input as one line (event, client, message)
    and answer it as Gradio does, without Gradio's traceback: whatever fails while Gradio reads the inputs (a value
    the page never offers, a number that is not one, a table that is not one), and a Gradio ``Error`` a handler
    raises to refuse. Any other failure of a handler still writes its traceback."""
    from gradio.exceptions import Error

    preprocess, process = blocks.preprocess_data, blocks.process_api

    async def preprocess_data(block_fn, inputs, state, *args, **kwargs):
        try:
            return await preprocess(block_fn, inputs, state, *args, **kwargs)
        except Error as error:
            if not error.print_exception:
                raise
            message = str(error)
        except Exception as error:  # noqa: BLE001 - the input's fault, whatever Gradio's reader raised
            message = str(error).split(" with input components")[0]
        refused = Error("The request's input is not one the page sends: reload the page.", print_exception=False)
        refused.arena_reason = message
        raise refused

    async def process_api(block_fn, *args, **kwargs):
        try:
            return await process(block_fn, *args, **kwargs)
        except Error as error:
            if error.print_exception or hasattr(error, "arena_reason"):
                error.print_exception = False
                _log_refusal(blocks, block_fn, kwargs, getattr(error, "arena_reason", str(error)))
            raise

    blocks.preprocess_data, blocks.process_api = preprocess_data, process_api


def _log_refusal(blocks, block_fn, kwargs, message: str) -> None:
    fn = blocks.fns.get(block_fn) if isinstance(block_fn, int) else block_fn
    request = kwargs.get("request")
    client = getattr(getattr(request, "client", None), "host", None) or "unknown"
    logging.getLogger("arena.web").info("refused %s from %s: %s", getattr(fn, "api_name", None) or "an event", client,
                                        " ".join(message.split())[:300])
