"""The arena tab: sign in, see a prompt and two anonymous images, vote, see the names, go on.

One request per vote: the vote's answer reveals the names and carries the next battle (drawn in the vote's own
transaction, :func:`arena.session.vote`), which the page keeps hidden, its images preloaded, until the voter presses
Next battle; that swap happens in the browser, with no request. Skipping a battle without a vote, or picking another
suite, loads one from the server. Every vote names the battle on screen by its media token, so a vote can only land on
the battle the voter sees.

No ``from __future__ import annotations`` here: Gradio reads the handlers' type hints on every call, and string
annotations would be evaluated anew each time.
"""


import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path

import gradio as gr

from arena import session as sessions
from datamodel.annotators import SignInError, first_guidelines_visit
from datamodel.models import model_details
from datamodel.standing import standing
from sampling.draws import NoBattleAvailable
from datamodel.votes import OUTCOME_LABELS, VoteRejected
from arena.ratelimit import RateLimited, client_address
from arena.web.context import SIGN_IN_QUEUE, AppContext, refusal, throttled_sign_in, unwritable
from arena.web.render import (KEY_HINTS, escape_markdown, expected_outcome, guidelines_markdown, image_html,
                              load_guidelines, prompt_markdown, reveal_html, speed_notice, status_markdown)
from suites.registry import suite_title

ALL_SUITES = "All suites"
# A reveal names the models with their details as of a catalog change counter read at most this long ago (by a draw,
# or else by the reveal): an admin's new description shows within a second.
DETAILS_MAX_AGE_S = 1.0
EXPECTED_LABEL = "Expected outcome after the vote"
BUTTON_IDS = {"A": "vote-a", "B": "vote-b", "tie": "vote-tie", "both_bad": "vote-both-bad"}
BUTTON_KEYS = {"A": "A", "B": "B", "tie": "T", "both_bad": "X"}

# What a newcomer reads before signing in: the task, and what the token is.
HOW_IT_WORKS = (
    "**How it works.** You see a prompt and two images that two different models made from it, without their names. "
    "Pick the image that shows the prompt better (or *Tie*, or *Both are bad*); the models' names appear after your "
    "vote, and the votes make the leaderboard."
)
SIGN_UP = ("**Sign in** with a name and a token of your choice. The token is a password you make up now (at least "
           "{min} characters) and type again with the same name next time: it keeps your votes yours.")
SIGN_IN = "**Sign in** with the name and token your admin gave you."

# The page's look while voting (with the page-wide CSS of arena.web.app).
ARENA_CSS = """
/* once signed in, the page's title goes: the battle gets the room (KEYBOARD_JS marks the page "arena-playing") */
.arena-playing #page-title { display: none !important; }
#arena-box { gap: 6px !important; }
#arena-top { align-items: center; gap: 8px; flex-wrap: wrap !important; }
#arena-top > #status { flex: 1 1 300px !important; min-width: 300px !important; }
#status p { margin: 0.15em 0; }
#prompt h3 { margin: 0.1em 0; }
#prompt p { margin: 0.1em 0; }
#reveal .reveal { line-height: 1.4; min-height: 1.4em; }
#battle-images .html-container, #reveal .html-container { padding-top: 0 !important; padding-bottom: 0 !important; }
/* the names and the vote on one line (each name is also over its image, whole in its tooltip) */
#reveal .reveal-line { display: block; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.arena-warning { display: inline-block; padding: 1px 8px; border-left: 3px solid #d97706; border-radius: 3px;
                 background: #fff7ed; color: #7c2d12; font-weight: 600; }
.arena-note { color: var(--body-text-color-subdued); }
.reveal .your-board { margin-left: 4px; padding: 1px 10px; border-radius: 6px; cursor: pointer;
                      border: 1px solid var(--button-primary-border-color, #f97316); font-weight: 600;
                      background: var(--button-secondary-background-fill, #f4f4f5); color: inherit; }
.arena-hidden { display: none !important; }
.gradio-container:has(#reveal .voted) :is(#vote-a, #vote-b, #vote-tie, #vote-both-bad) {
    opacity: 0.45; pointer-events: none; }
.gradio-container:has(#reveal .voted) #skip-battle, .gradio-container:not(:has(#reveal .voted)) #next-battle {
    display: none; }
/* until both images of the battle on screen have loaded (KEYBOARD_JS), no vote: the keys check the same */
.images-pending :is(#vote-a, #vote-b, #vote-tie, #vote-both-bad) { opacity: 0.45; pointer-events: none; }
#vote-bar { gap: 8px; flex-wrap: nowrap; }
#vote-bar > button { flex: 1 1 0; }
#signin-message p { color: var(--error-text-color, #b91c1c); }
/* the keyboard shortcuts, only where there is a keyboard and a fine pointer (never on a touch screen) */
.key-hint { display: none; }
@media (hover: hover) and (pointer: fine) {
    .key-hint { display: inline; }
    #vote-a::after { content: "\\00a0(A)"; }
    #vote-b::after { content: "\\00a0(B)"; }
    #vote-tie::after { content: "\\00a0(T)"; }
    #vote-both-bad::after { content: "\\00a0(X)"; }
    #next-battle::after { content: "\\00a0(N)"; }
    #skip-battle::after { content: "\\00a0(N)"; }
}
/* the two images side by side, or one above the other where that makes them larger (a phone): KEYBOARD_JS sets
   their size (--image-size) so that the vote bar (on a phone: the images, above the fixed bar) stays in view */
#battle-images { gap: 12px; flex-wrap: nowrap !important; }
#battle-images > * { min-width: 0 !important; flex: 1 1 0 !important; }
.arena-stacked #battle-images { flex-direction: column !important; }
#battle-images .battle-image { margin: 0; display: flex; flex-direction: column; align-items: center; }
#battle-images .battle-image img { display: block; width: var(--image-size, min(100%, calc(100vh - 380px)));
    height: var(--image-size, auto); max-width: 100%; aspect-ratio: 1 / 1; object-fit: contain;
    border: 1px solid var(--border-color-primary); border-radius: 6px; cursor: zoom-in; }
/* a caption of the same height before the vote and after it, so the reveal moves nothing: the side, then the
   model's name (a long one cut with an ellipsis, the whole in its tooltip) and what the model is */
#battle-images figcaption { width: var(--image-size, 100%); max-width: 100%; height: 3.45em; overflow: hidden;
                            display: flex; flex-direction: column; line-height: 1.3em; }
/* the name and the model card link on the first line (the link never cut), the description on two lines under it */
#battle-images .model-line { display: flex; align-items: baseline; gap: 10px; min-width: 0; }
#battle-images .model-name { font-weight: 700; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
                             min-width: 0; }
#battle-images .model-card { flex: none; font-size: 0.85em; }
#battle-images .model-about { font-size: 0.85em; line-height: 1.2em; color: var(--body-text-color-subdued);
                              display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2;
                              overflow: hidden; }
/* each model's whole description, in the reveal: only on a phone (below) */
#reveal .reveal-about { display: none; }
.battle-image img { cursor: zoom-in; }
/* a clicked image fills the window; another click or Escape puts it back (and until then no key votes) */
.battle-image.enlarged { position: fixed; inset: 0; z-index: 1000; margin: 0; padding: 1em; cursor: zoom-out;
                         background: rgba(0, 0, 0, 0.88); color: #fff; display: flex; flex-direction: column;
                         align-items: center; justify-content: center; }
.battle-image.enlarged img { width: auto !important; height: auto !important; max-width: 96vw; max-height: 84vh;
                             cursor: zoom-out; }
.battle-image.enlarged figcaption { color: #fff; }
.battle-image.enlarged figcaption * { color: #fff !important; }
.battle-image.enlarged::before { content: "✕  Close: click anywhere or press Esc"; position: absolute; top: 12px;
                                 right: 14px; padding: 6px 12px; border-radius: 6px; font-weight: 700;
                                 background: rgba(255, 255, 255, 0.18); }
@media (hover: none), (pointer: coarse) { .battle-image.enlarged::before { content: "✕  Close: tap anywhere"; } }
.battle-image figcaption { font-weight: 600; margin-bottom: 0.3em; }
/* on a phone the vote bar stays at the bottom of the screen (fixed: Gradio's containers clip sticky ones), in two
   rows: A and B, then Tie, Both bad and Skip (Next after the vote); the reveal sits on it */
#arena-menu { display: none !important; }
.arena-menu-toggle { padding: 4px 10px; border-radius: 6px; border: 1px solid var(--border-color-primary);
                     background: var(--button-secondary-background-fill, #f4f4f5); font-weight: 600;
                     white-space: nowrap; color: inherit; }
@media (max-width: 640px) {
    #status { font-size: 0.88em; }
    /* the status over the whole width, the toggle at the right of its first line */
    #arena-top { flex-wrap: wrap !important; row-gap: 6px; position: relative; }
    #arena-top > #status { flex: 1 1 100% !important; min-width: 100% !important; }
    #status p:first-child { padding-right: 84px; }
    #arena-menu { display: block !important; position: absolute !important; top: 0; right: 0; min-width: 0 !important;
                  width: auto !important; z-index: 2; }
    /* the suite menu, the expected outcome and Sign out, folded until the toggle opens them (Gradio prefixes every
       selector in a @media rule with its container and splits it at each comma: no :is() lists, no html classes) */
    #arena-top:not(.menu-open) > #suite-filter { display: none !important; }
    #arena-top:not(.menu-open) > #show-expected { display: none !important; }
    #arena-top:not(.menu-open) > #sign-out { display: none !important; }
    #arena-top > #suite-filter { flex: 1 1 100% !important; min-width: 100% !important; }
    #vote-bar { position: fixed; left: 0; right: 0; bottom: 0; z-index: 20; display: grid !important;
                grid-template-columns: repeat(6, 1fr); gap: 6px; padding: 6px 8px;
                background: var(--background-fill-primary); box-shadow: 0 -3px 6px rgba(0, 0, 0, 0.15); }
    #vote-bar > button { min-width: 0 !important; padding-left: 4px !important; padding-right: 4px !important; }
    #vote-a, #vote-b { grid-column: span 3; }
    #vote-tie, #vote-both-bad, #next-battle, #skip-battle { grid-column: span 2; }
    /* room under the arena as tall as the bar (measured by KEYBOARD_JS): the guidelines scroll above it */
    #arena-box { padding-bottom: calc(var(--vote-bar-height, 110px) + 8px) !important; }
    #reveal:has(.voted) { position: fixed; left: 0; right: 0; bottom: var(--vote-bar-height, 110px); z-index: 19;
                          margin: 0; padding: 6px 10px; max-height: 45vh; overflow-y: auto; font-size: 0.92em;
                          background: var(--background-fill-primary); border-top: 1px solid var(--border-color-primary);
                          box-shadow: 0 -3px 6px rgba(0, 0, 0, 0.08); }
    #reveal .reveal-line { white-space: normal; }
    /* the caption over each image keeps the name and the model card link; the whole description is in the reveal */
    #battle-images figcaption { height: 1.3em; }
    #battle-images .model-about { display: none; }
    #reveal .reveal-about { display: block; margin-top: 4px; }
    #reveal .reveal-about > div { margin-top: 2px; }
}
"""

KEYBOARD_JS = """
<script>
document.addEventListener('keydown', (event) => {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;  // a held key votes once
  // typing in a text field is not a shortcut; a checkbox, a button or a link keeps no key (focus never traps them)
  const typing = target && ((target.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit'].includes(
    target.type)) || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT' || target.isContentEditable);
  if (typing) return;
  const ids = {a: ['vote-a'], b: ['vote-b'], t: ['vote-tie'], x: ['vote-both-bad'], n: ['next-battle', 'skip-battle'],
               '1': ['vote-a'], '2': ['vote-b'], '3': ['vote-tie'], '4': ['vote-both-bad']};
  // an enlarged image holds the keys: Escape (or a shortcut) puts it back, and nothing votes while it is enlarged
  const enlarged = document.querySelectorAll('.battle-image.enlarged');
  if (enlarged.length) {
    if (event.key === 'Escape' || ids[event.key.toLowerCase()]) {
      event.preventDefault();
      enlarged.forEach((figure) => figure.classList.remove('enlarged'));
    }
    return;
  }
  const voted = document.querySelector('#reveal .voted') !== null;
  for (const id of ids[event.key.toLowerCase()] || []) {
    const button = document.getElementById(id);
    if (id.startsWith('vote-') && (voted || !window.arenaImagesShown())) return;
    if (button && !button.disabled && button.getClientRects().length) { event.preventDefault(); button.click(); return; }
  }
});
// Votes wait until both images of the battle on screen have loaded: until then the page carries the class
// "images-pending" (CSS greys the vote buttons and lets no click through; the keys above check the same).
window.arenaImagesShown = () => {
  const images = [...document.querySelectorAll('#image-a img, #image-b img')];
  return images.length === 2 && images.every((img) => img.complete && img.naturalWidth > 0);
};
const arenaMarkImages = () => document.documentElement.classList.toggle('images-pending', !window.arenaImagesShown());
// An image of the battle on screen that loads or fails marks the page at once (no layout read: cheap) and has
// the layout looked at in the next frame, as a change of the page is (arenaOnChange); measuring it here, in the
// load event, forced the browser to lay the page out before it had drawn the new battle (issue 29's Next → images
// on a phone, 4 → 9 ms). The next battle's images, preloaded hidden in the reveal, change nothing on screen.
const arenaImageEvent = (event) => {
  if (!event.target.closest || !event.target.closest('#image-a, #image-b')) return;
  arenaMarkImages();
  arenaOnChange();
};
document.addEventListener('load', arenaImageEvent, true);  // image loads do not bubble: listen while capturing
document.addEventListener('error', arenaImageEvent, true);
// On a phone the vote bar is fixed over the bottom of the screen: the page keeps room under the arena as tall as the
// bar (CSS reads --vote-bar-height), and the reveal sits on it.
const arenaBarSize = new ResizeObserver((entries) => entries.forEach((entry) => {
  document.documentElement.style.setProperty('--vote-bar-height',
                                             `${Math.ceil(entry.target.getBoundingClientRect().height)}px`);
  arenaLayout();
}));
let arenaBar = null;
const arenaWatchBar = () => {
  const bar = document.getElementById('vote-bar');
  if (!bar || bar === arenaBar) return;
  if (arenaBar) arenaBarSize.unobserve(arenaBar);
  arenaBar = bar;
  arenaBarSize.observe(bar);
};
// The images' size (CSS reads --image-size): as large as the window allows with everything else of the battle in
// view, the page scrolled to its top. On a wide screen the vote bar and the reveal stay in the window under the two
// images; on a phone, whose bar is fixed to the bottom of the screen, both images stay above the bar, side by side
// or one above the other (class "arena-stacked"), whichever makes them larger. Once signed in the page also carries
// "arena-playing" (CSS folds the page's title).
const arenaLayout = () => {
  const root = document.documentElement;
  const bar = document.getElementById('vote-bar');
  const row = document.getElementById('battle-images');
  const caption = document.querySelector('#image-a figcaption');
  const playing = !!bar && bar.getClientRects().length > 0 && !!row;
  root.classList.toggle('arena-playing', playing);
  if (!playing || !caption) return;
  const phone = window.innerWidth <= 640;
  const gap = 12, margin = 8, least = 120;
  const html = document.getElementById('image-a');
  const image = html && html.querySelector('img');
  if (!image) return;
  const rowBox = row.getBoundingClientRect(), htmlBox = html.getBoundingClientRect();
  const below = phone ? rowBox.bottom : bar.getBoundingClientRect().bottom;  // what must be in view
  const room = window.innerHeight - margin - (phone ? bar.getBoundingClientRect().height : 0);
  const height = room - (below + window.scrollY - rowBox.height);  // for the images' row, the rest of the page kept
  const around = htmlBox.height - image.getBoundingClientRect().height;  // one image's caption, margins, padding
  const inset = htmlBox.width - image.parentElement.getBoundingClientRect().width;  // the component's padding
  const width = row.clientWidth;
  const side = Math.min((width - gap) / 2 - inset, height - around);
  const stacked = Math.min(width - inset, (height - gap) / 2 - around);
  const stack = phone && stacked > side + 8;
  root.classList.toggle('arena-stacked', stack);
  const size = `${Math.floor(Math.max(least, stack ? stacked : side))}px`;
  if (root.style.getPropertyValue('--image-size') !== size) root.style.setProperty('--image-size', size);
};
window.addEventListener('resize', arenaLayout);
// Changes of the page are looked at once per frame: measuring the layout at every change Gradio makes while it draws
// an answer would make the browser lay the page out again each time.
let arenaFrameAsked = false;
const arenaOnChange = () => {
  if (arenaFrameAsked) return;
  arenaFrameAsked = true;
  requestAnimationFrame(() => {
    arenaFrameAsked = false; arenaMarkImages(); arenaWatchBar(); arenaLayout(); arenaRemember();
  });
};
// A reload comes back as the page was: the suite picked and the battle on screen (its media token, read from its
// image), which the server shows again with its reveal when it was voted on (READ_RESUME_JS sends both).
let arenaRemembered = '';
const arenaRemember = () => {
  const image = document.querySelector('#image-a img');
  const menu = document.querySelector('#suite-filter input');
  if (!image || !menu || !menu.value) return;
  const token = (image.getAttribute('src') || '').split('/').slice(-2, -1)[0] || '';
  const kept = `${token}\n${menu.value}`;
  if (kept === arenaRemembered) return;
  arenaRemembered = kept;
  localStorage.setItem('arena-on-screen', token);
  localStorage.setItem('arena-suite', menu.value);
};
const arenaWatchImages = () => {
  new MutationObserver(arenaOnChange).observe(document.body, {childList: true, subtree: true});
  arenaMarkImages();
  arenaWatchBar();
  arenaLayout();
};
// the page may add this script after the document has loaded
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', arenaWatchImages);
else arenaWatchImages();
// Next battle shows the new prompt: the page goes back to its top when the prompt is not at the top of the screen.
window.arenaShowPrompt = () => requestAnimationFrame(() => {
  const prompt = document.getElementById('prompt');
  if (prompt && (window.innerWidth <= 640 || prompt.getBoundingClientRect().top < 0)) window.scrollTo(0, 0);
});
// A click on a battle image enlarges it over the page; another click (or Escape) puts it back. The button the
// reveal offers after enough votes opens the voter's own leaderboard (a hidden button of the page does it).
document.addEventListener('click', (event) => {
  if (event.target.closest && event.target.closest('.reveal .your-board')) {
    const open = document.getElementById('open-your-board');
    if (open) open.click();
    return;
  }
  if (event.target.closest && event.target.closest('.battle-image a')) return;  // a model card link opens
  const figure = event.target.closest && event.target.closest('.battle-image');
  if (figure && figure.querySelector('img')) figure.classList.toggle('enlarged');
});
// a phone's folded controls: the toggle opens and closes them
document.addEventListener('click', (event) => {
  const toggle = event.target.closest && event.target.closest('.arena-menu-toggle');
  if (!toggle) return;
  const top = document.getElementById('arena-top');
  if (!top) return;
  const open = top.classList.toggle('menu-open');
  toggle.setAttribute('aria-expanded', String(open));
});
// "vote again in 14 s": the page counts the seconds down
setInterval(() => document.querySelectorAll('.countdown[data-seconds]').forEach((span) => {
  const left = Math.max(0, Number(span.dataset.seconds) - 1);
  span.dataset.seconds = String(left);
  span.textContent = String(left);
}), 1000);
</script>
"""

# Before a vote is sent: the on-screen token as "token@seconds shown" when the page swapped the battle in itself.
VOTE_JS = """
(state, suite, expected, onScreen) => {
  const [token, shownAt] = String(onScreen || '').split('@');
  return [state, suite, expected, shownAt ? `${token}@${(Date.now() - Number(shownAt)) / 1000}` : token];
}
"""

# Next battle, in the browser: show the battle that came with the vote (its images are already loaded; its prompt
# without the expected outcome, which is shown only after a vote), and the page from the new prompt on.
NEXT_JS = """
(next, ...current) => {
  if (!next) return current;
  if (window.arenaShowPrompt) window.arenaShowPrompt();
  return [next.prompt, next.image_a, next.image_b, '<div class="reveal"></div>',
          next.token ? `${next.token}@${Date.now()}` : '', null];
}
"""

# Staying signed in: the token the sign-in answered is kept in the browser's local storage; a reload sends it back.
RESUME_KEY = "arena-session"
KEEP_RESUME_JS = f"(token) => {{ if (token) localStorage.setItem('{RESUME_KEY}', token); }}"
READ_RESUME_JS = (f"() => [localStorage.getItem('{RESUME_KEY}') || '', localStorage.getItem('arena-suite') || '', "
                  "localStorage.getItem('arena-on-screen') || '']")
FORGET_RESUME_JS = (f"(...inputs) => {{ ['{RESUME_KEY}', 'arena-suite', 'arena-on-screen'].forEach((key) => "
                    "localStorage.removeItem(key)); return inputs; }")

NO_BATTLE_LEFT = "No battle left to show here. Pick another suite, or come back when there are new images."


@dataclass(frozen=True)
class ArenaTab:
    """What the rest of the page wires to the arena tab: the signed-in session, and the hidden button that the
    reveal's "See your own leaderboard" clicks."""

    state: gr.State
    your_board: gr.Button


def read_on_screen(value) -> tuple:
    """(media token, seconds shown) from the page's on-screen value "token" or "token@seconds"; None where absent."""
    if not isinstance(value, str) or not value:
        return None, None
    token, _, seconds = value.partition("@")
    try:
        shown = float(seconds) if seconds else None
    except ValueError:
        shown = None
    return token or None, shown if shown is not None and 0 <= shown < 366 * 86400 else None


def upcoming_view(battle) -> dict:
    """The next battle as the page keeps it until Next battle: its prompt (never with the expected outcome: it is not
    voted on yet) and images, by media token."""
    if battle is None:
        return {"token": "", "prompt": NO_BATTLE_LEFT,
                "image_a": image_html(None, "a", "A"), "image_b": image_html(None, "b", "B")}
    return {"token": battle.media_token, "prompt": prompt_markdown(battle),
            "image_a": image_html(battle.media_token, "a", "A"), "image_b": image_html(battle.media_token, "b", "B")}


def build_arena_tab(ctx: AppContext) -> ArenaTab:
    settings = ctx.settings
    open_signup = not settings.annotator_accounts
    state = gr.State(None)  # an ArenaSession once signed in; held on the server
    rules = settings.quality_rules

    with gr.Column(visible=True, elem_id="signin-box") as signin_box:
        gr.Markdown(HOW_IT_WORKS + "\n\n" + (SIGN_UP.format(min=settings.min_token_length) if open_signup
                                             else SIGN_IN), elem_id="signin-intro")
        with gr.Row():
            name_box = gr.Textbox(label="Name", elem_id="signin-name", max_lines=1)
            token_box = gr.Textbox(label="Token", type="password", elem_id="signin-token", max_lines=1)
        signin_button = gr.Button("Sign in", variant="primary", elem_id="signin-button")
        signin_message = gr.Markdown(elem_id="signin-message")  # what went wrong; the form stays as typed
    with gr.Column(visible=False, elem_id="arena-box") as arena_box:
        # one compact row: who, their votes and warnings; the suite menu, the expected outcome, sign out
        with gr.Row(elem_id="arena-top"):
            status = gr.Markdown(elem_id="status", min_height=0)
            # on a phone the three controls are folded behind this toggle (KEYBOARD_JS opens and closes them)
            gr.HTML('<button class="arena-menu-toggle" type="button" aria-expanded="false">Suite ▾</button>',
                    elem_id="arena-menu", container=False, min_height=0)
            suite_filter = gr.Dropdown([ALL_SUITES], value=ALL_SUITES, label="Suite", show_label=False,
                                       container=False, elem_id="suite-filter", scale=0, min_width=190)
            # the benchmark's answer, shown once the voter has voted (in the reveal; ticked then, in the prompt)
            show_expected = gr.Checkbox(label=EXPECTED_LABEL, value=False, elem_id="show-expected", scale=0,
                                        container=False, min_width=150)
            sign_out_button = gr.Button("Sign out", size="sm", elem_id="sign-out", scale=0, min_width=80)
        prompt = gr.Markdown(elem_id="prompt")
        with gr.Row(equal_height=True, elem_id="battle-images"):
            image_a = gr.HTML(elem_id="image-a", container=False)
            image_b = gr.HTML(elem_id="image-b", container=False)
        reveal = gr.HTML(elem_id="reveal", container=False)  # the names, in place under the images
        # The vote bar (fixed at the bottom of a phone's screen). CSS shows one of the last two: Next battle after a
        # vote (in the browser), Skip before it (from the server). The keys show on the buttons only where there is
        # a keyboard (CSS).
        with gr.Row(elem_id="vote-bar"):
            vote_buttons = {
                outcome: gr.Button(OUTCOME_LABELS[outcome], elem_id=BUTTON_IDS[outcome],
                                   variant="primary" if outcome in ("A", "B") else "secondary", min_width=80)
                for outcome in BUTTON_IDS
            }
            next_button = gr.Button("Next battle", variant="primary", elem_id="next-battle", min_width=80)
            skip_button = gr.Button("Skip", elem_id="skip-battle", min_width=80)
        open_box = None
        if ctx.open_prompts is not None:  # the annotator's own prompt, made live (arena.web.open_prompt)
            from arena.web.open_prompt import OpenPromptBox

            open_box = OpenPromptBox(ctx)
        # what the reveal's "See your own leaderboard" clicks (arena.web.app wires it to the Leaderboard tab)
        your_board = gr.Button("Your leaderboard", elem_id="open-your-board", elem_classes=["arena-hidden"])
        # What "better" means, per suite; open on the annotator's first visit, folded on every later one.
        with gr.Accordion("Guidelines", open=True, elem_id="guidelines") as guidelines_box:
            guidelines = gr.Markdown(elem_id="guidelines-text")
            gr.HTML(f'<p class="key-hint">{KEY_HINTS}</p>', elem_id="key-hints")
        on_screen = gr.Textbox(visible=False, elem_id="on-screen")  # the media token of the battle on screen
        upcoming = gr.JSON(visible=False, elem_id="upcoming")  # the next battle, sent with the vote (upcoming_view)
        if open_box is not None:
            open_box.wire(state, [prompt, image_a, image_b, reveal, on_screen, upcoming])
    issued = gr.Textbox(visible=False)  # the token that keeps this browser signed in (sessions.issue_resume)
    # never change: the inputs of the page-load event, read from local storage (the token, the suite's title and
    # the media token of the battle on screen before the reload)
    stored, stored_suite, stored_shown = (gr.Textbox(visible=False) for _ in range(3))

    # Every battle event answers with plain values, never component updates: Gradio rebuilds a component for each
    # update, which cost more than the whole vote under load. Whether the shown battle is voted on travels in the
    # reveal's HTML (class "voted"); CSS greys the vote buttons then, and the server refuses a second vote anyway.
    battle_outputs = [state, status, prompt, image_a, image_b, reveal, on_screen, upcoming]
    vote_outputs = [state, status, image_a, image_b, reveal, upcoming]

    guide = load_guidelines(Path(settings.guidelines_file) if settings.guidelines_file else None)  # read at start

    def trusted(session: sessions.ArenaSession) -> bool:
        return session.annotator.source in rules.trusted_sources

    def status(session: sessions.ArenaSession, suite: str | None, notice: str = "", error: str = "",
               standing_now=None) -> str:
        """The status line for ``session``: its annotator's votes cast and counted, the warnings of the quality
        rules, and progress in ``suite`` (the chosen one; None: all suites)."""
        db = ctx.store.db()
        title = suite_title(suite) if suite is not None else "all suites"
        progress = (*sessions.progress(db, session.annotator.id, suite), title)
        standing_now = standing_now or standing(db, session.annotator.id, rules)
        return status_markdown(session.annotator.name, standing_now, notice, progress=progress, error=error,
                               rules=rules, trusted=trusted(session))

    def unsaved(session: sessions.ArenaSession, error: Exception, event: str, request, outputs: int,
                suite: str | None = None) -> list:
        """A vote or battle the database could not write (a full disk, a read-only file), told like a refusal."""
        line = status(session, suite, error=unwritable(error, event, request))
        return [gr.skip(), line, *[gr.skip()] * (outputs - 2)]

    def refused(session: sessions.ArenaSession, error: Exception, event: str, request, outputs: int,
                suite: str | None = None) -> list:
        """A refused vote or battle, told in words on the status line; everything else stays as it is, the session
        state included: a request refused because another of the same tab ran at the same time (a double click)
        must not write back the state it started from over the one the other request left."""
        refusal(error, event, request)  # the log line
        line = status(session, suite, error=str(error))
        return [gr.skip(), line, *[gr.skip()] * (outputs - 2)]

    def show(session: sessions.ArenaSession, message: str = "", suite: str | None = None) -> list:
        """A battle loaded from the server (sign-in, skip, suite, reload), unvoted, so without its expected outcome;
        nothing waits behind it."""
        battle = session.battle
        body = prompt_markdown(battle) if battle else message or "No battle available."
        token = battle.media_token if battle else None
        return [session, status(session, suite), body, image_html(token, "a", "A"),
                image_html(token, "b", "B"), reveal_html(None), token or "", None]

    def chosen_suite(suite, request: gr.Request | None = None) -> str | None:
        """The suite filter's value as the sessions take it (None: all suites), refused unless it is one of the
        menu's choices. The battle events skip Gradio's preprocessing, which would otherwise check this."""
        if suite is None or suite == ALL_SUITES:
            return None
        if not isinstance(suite, str) or suite not in ctx.pool.suites(ctx.store.db()):
            raise refusal(f"Unknown suite {str(suite)[:60]!r}: pick one from the Suite menu.", "suite", request)
        return suite

    def load_next(session: sessions.ArenaSession | None, suite: str, expected: bool,
                  request: gr.Request = None) -> list:
        if session is None:
            raise refusal("Sign in with your name and token first.", "next_battle", request)
        suite = chosen_suite(suite, request)
        try:  # each battle loaded without a vote writes a battle row: limited per annotator and per address
            ctx.skip_limit.check(session.annotator.name)
            ctx.client_skip_limit.check(client_address(request))
        except RateLimited as error:
            return refused(session, error, "next_battle", request, len(battle_outputs), suite)
        try:
            session = sessions.next_battle(ctx.store.db(), ctx.rng, session, suite=suite, sampler=ctx.sampler)
        except NoBattleAvailable as error:
            return show(sessions.ArenaSession(annotator=session.annotator, session_id=session.session_id,
                                              votes=session.votes, signed_in_at=session.signed_in_at),
                        str(error), suite)
        except VoteRejected as error:
            return refused(session, error, "next_battle", request, len(battle_outputs), suite)
        except sqlite3.OperationalError as error:
            return unsaved(session, error, "next_battle", request, len(battle_outputs), suite)
        return show(session, suite=suite)

    def sign_in(name: str, token: str, session: sessions.ArenaSession | None, suite: str, expected: bool,
                request: gr.Request = None) -> list:
        try:  # failures are throttled per address and overall (arena.ratelimit.LoginThrottle)
            session = throttled_sign_in(ctx, request, name, lambda: sessions.start(
                ctx.store.db(), name, token, open_signup=open_signup, min_token_length=settings.min_token_length))
        except (RateLimited, SignInError) as error:  # said under the form, which keeps what was typed
            refusal(error, "sign_in", request, warn=isinstance(error, SignInError))
            return [f"**⚠ {escape_markdown(error)}**", *[gr.skip()] * (len(signin_outputs) - 1)]
        except sqlite3.OperationalError as error:
            return [f"**⚠ {escape_markdown(unwritable(error, 'sign_in', request))}**",
                    *[gr.skip()] * (len(signin_outputs) - 1)]
        session = sessions.issue_resume(ctx.store.db(), session, days=settings.session_days)
        return [*opened(session), *load_next(session, ALL_SUITES, expected, request), session.resume_token or ""]

    def opened(session: sessions.ArenaSession, suite: str | None = None) -> list:
        """The page once signed in: the form hidden, the arena shown, the suites named by their titles (as the
        prompt panel names them), ``suite`` picked (None: all suites), the guidelines open on the annotator's first
        visit only (a reload or a new sign-in finds them folded, a click on their header opens them)."""
        names = ctx.pool.suites(ctx.store.db())
        suites = [ALL_SUITES, *((suite_title(name), name) for name in names)]
        return ["", gr.update(visible=False), gr.update(visible=True),
                gr.update(choices=suites, value=suite or ALL_SUITES),
                gr.update(open=first_guidelines_visit(ctx.store.db(), session.annotator.id)),
                guidelines_markdown(names, guide)]

    def resume(token: str, kept_suite: str = "", kept_shown: str = "", request: gr.Request = None) -> list:
        """A page (re)loaded with a stored token: signed in again, in the suite it had picked (``kept_suite``, its
        title), on the battle it showed (``kept_shown``, its media token) with its reveal when this session voted on
        it, else on the session's battle not yet voted on (or a new one)."""
        session = sessions.resume(ctx.store.db(), token, open_signup=open_signup) if token else None
        if session is None:
            return [gr.skip()] * len(signin_outputs)
        names = {suite_title(name): name for name in ctx.pool.suites(ctx.store.db())}
        suite = names.get(kept_suite) if isinstance(kept_suite, str) else None
        back = sessions.revealed_vote(ctx.store.db(), session, kept_shown)
        if back is not None:  # the reveal of the battle voted on; the battle drawn with the vote waits for Next
            voted, receipt = back
            session = replace(session, revealed=voted)
            return [*opened(session, suite), session, status(session, suite), prompt_markdown(voted),
                    *revealed_view(receipt, voted, session.battle), voted.media_token,
                    upcoming_view(session.battle), gr.skip()]
        if session.battle is None:
            return [*opened(session, suite), *load_next(session, suite or ALL_SUITES, False, request), gr.skip()]
        return [*opened(session, suite), *show(session, suite=suite), gr.skip()]

    def revealed_view(receipt, battle, following, offer: int = 0, expected: bool = False) -> list:
        """[image A, image B, reveal] of ``battle`` once voted on (``receipt``): each model's name, description and
        link, the next battle's images (``following``) preloaded, the voter's own leaderboard offered after
        ``offer`` votes, the expected outcome when the voter asked for it. The models' details are kept until the
        catalog changes, as the last draw saw it (:data:`DETAILS_MAX_AGE_S`)."""
        db, names = ctx.store.db(), (receipt.model_a, receipt.model_b)
        details = ctx.pool.catalog_cached(db, ("model details", *names), lambda: model_details(db, list(names)),
                                          max_age_s=DETAILS_MAX_AGE_S)
        return [image_html(battle.media_token, "a", f"A: {receipt.model_a}", details.get(receipt.model_a)),
                image_html(battle.media_token, "b", f"B: {receipt.model_b}", details.get(receipt.model_b)),
                reveal_html(receipt, following.media_token if following else None, offer_board=offer,
                            details=details, expected=expected_outcome(battle) if expected else "")]

    def sign_out(session: sessions.ArenaSession | None) -> list:
        """Sign out everywhere: every stored token of the annotator is revoked (this page forgets its own), every
        other tab of theirs stops at its next request, and the form comes back."""
        if session is not None:
            sessions.sign_out(ctx.store.db(), session)
        return [gr.update(visible=True), gr.update(visible=False), None]

    def cast_vote(outcome: str, session: sessions.ArenaSession | None, suite: str, expected: bool, shown: str,
                  request: gr.Request) -> list:
        """Record the vote, reveal the names (and what each model is) on the voted images, say whether the vote
        counts, send the next battle along, and make it the session's current battle (the page shows it when the
        voter presses Next battle)."""
        if session is None:
            raise refusal("Sign in with your name and token first.", "vote", request)
        suite = chosen_suite(suite, request)
        token, seconds = read_on_screen(shown)
        try:
            ctx.annotator_limit.check(session.annotator.name)
            ctx.client_limit.check(client_address(request))
            voted = sessions.vote(ctx.store.db(), session, outcome, rules=rules, rng=ctx.rng,
                                  suite=suite, sampler=ctx.sampler, on_screen=token, seconds_on_screen=seconds,
                                  expected_shown=False)  # the page shows it only after the vote
        except VoteRejected as error:  # told on the status line; the battle stays on screen
            return refused(session, error, "vote", request, len(vote_outputs), suite)
        except sqlite3.OperationalError as error:
            return unsaved(session, error, "vote", request, len(vote_outputs), suite)
        receipt, battle, following = voted.receipt, voted.battle, voted.upcoming
        now = standing(ctx.store.db(), voted.annotator.id, rules)
        notice = speed_notice(voted.fast_run, rules, voted.annotator.source)
        every = settings.personal_board_votes
        offer = now.cast if every and now.cast >= every and now.cast % every == 0 else 0
        view = [status(voted, suite, notice, standing_now=now),
                *revealed_view(receipt, battle, following, offer, expected is True), upcoming_view(following)]
        if following is not None:  # handed to the page now: seconds_to_vote counts from here (or from Next battle)
            voted = sessions.show_upcoming(voted)
        return [voted, *view]

    def toggle_expected(session: sessions.ArenaSession | None, expected: bool, shown: str) -> str:
        """The prompt of the battle on screen with or without its expected outcome, once the voter has voted on it
        (the battle just voted on); a battle not yet voted on keeps it hidden."""
        token = read_on_screen(shown)[0]
        if session is None or token is None:
            return gr.skip()
        voted = [session.revealed, session.battle if session.receipt is not None else None]
        for battle in voted:
            if battle is not None and token == battle.media_token:
                return prompt_markdown(battle, show_expected=expected is True)
        return gr.skip()

    signin_inputs = [name_box, token_box, state, suite_filter, show_expected]
    signin_outputs = [signin_message, signin_box, arena_box, suite_filter, guidelines_box, guidelines, *battle_outputs,
                      issued]
    gr.on([signin_button.click, token_box.submit], sign_in, signin_inputs, signin_outputs, api_name="sign_in",
          **SIGN_IN_QUEUE).then(None, issued, None, js=KEEP_RESUME_JS)
    gr.on(None, resume, [stored, stored_suite, stored_shown], signin_outputs, js=READ_RESUME_JS,
          api_visibility="private", concurrency_limit=None)
    sign_out_button.click(sign_out, state, [signin_box, arena_box, state], js=FORGET_RESUME_JS,
                          api_visibility="private")
    # Votes and battles skip Gradio's queue: each is one short database transaction answered in the same HTTP
    # request (POST /gradio_api/run/predict), which under load costs a fraction of a queued event. They also skip
    # Gradio's per-component pre- and postprocessing: Gradio runs each of those in a worker thread (a thread hop per
    # input and output besides the handler's own), which under load cost more than the handler; these components
    # need none (the handlers check the raw inputs and return finished values).
    fast = dict(queue=False, preprocess=False, postprocess=False)
    # The suite menu's select event, not input: input fires twice for one pick (on the pick and on blur), and two
    # concurrent loads of one session leave it on one battle and the page on the other.
    gr.on([skip_button.click, suite_filter.select], load_next, [state, suite_filter, show_expected], battle_outputs,
          api_name="next_battle", **fast)
    next_button.click(None, [upcoming], [prompt, image_a, image_b, reveal, on_screen, upcoming],
                      js=NEXT_JS)

    def vote_handler(outcome: str):
        def handler(session: sessions.ArenaSession | None, suite: str, expected: bool, shown: str | None = None,
                    request: gr.Request = None) -> list:
            return cast_vote(outcome, session, suite, expected, shown, request)

        handler.__name__ = f"vote_{outcome.lower()}"
        return handler

    for outcome, button in vote_buttons.items():
        button.click(vote_handler(outcome), [state, suite_filter, show_expected, on_screen], vote_outputs,
                     api_name=f"vote_{outcome.lower()}", js=VOTE_JS, **fast)
    show_expected.change(toggle_expected, [state, show_expected, on_screen], prompt, api_visibility="private")
    # these refuse a page without a session at once: the front door refuses them before Gradio makes one
    ctx.opening_events.add("sign_in")  # a program's first call (the page's first is its load event)
    return ArenaTab(state, your_board)
