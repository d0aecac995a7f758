"""The Ratings tab in a real browser, as the rating tests drive it: sign in on the tab's form, wait until a question's
image is on screen (and, after an answer, until it is another one), the image's address."""

from __future__ import annotations

SHOWN = ("() => { const img = document.querySelector('#rating-image img.rating-shown'); "
         "return !!img && img.complete && img.naturalWidth > 0 "
         "&& !!document.querySelector('#rating-item [data-task]'); }")


NAME_BOX, TOKEN_BOX = "#rating-signin-name input, #rating-signin-name textarea", "#rating-signin-token input"
NEXT_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def submit_rating_sign_in(page, name: str, token: str) -> None:
    """Fill the Ratings tab's sign-in form and press Sign in (the answer is the test's to wait for).

    The boxes are filled, then filled again two frames later: a test fills them the instant the tab opens, and three
    CI runs under load sent an empty name ("Enter a name of 1 to 64 ...", said by :func:`wait_shown`). A probe
    here found the box still showing the name a moment later, so most likely the tab's first render set the value
    Gradio sends after the fill; a person types well after that render."""
    for _ in range(2):
        page.fill(NAME_BOX, name)
        page.fill(TOKEN_BOX, token)
        page.evaluate(NEXT_FRAMES)
    page.click("#rating-signin-button")


# what the tab says when no question came: the sign-in form's line, the tab's status line, the question's text
SAID = ("() => ['#rating-signin-message', '#rating-status', '#rating-item', '#rating-image'].map(s => { "
        "const e = document.querySelector(s); return s + ': ' + (e ? JSON.stringify(e.innerText.trim().slice(0, 300)) "
        "+ (e.closest('.hidden, [hidden]') ? ' (hidden)' : '') : 'none'); }).join('\\n')")


def wait_shown(page, timeout: int = 20000) -> None:
    """Wait until a question's image is on screen; if none comes, fail saying what the tab shows instead."""
    try:
        page.wait_for_function(SHOWN, timeout=timeout)
    except Exception as error:  # playwright's TimeoutError: what was on screen tells why
        raise AssertionError(f"no question on screen within {timeout / 1000:.0f} s; the tab shows:\n"
                             f"{page.evaluate(SAID)}") from error


def wait_question(page, previous: str | None = None) -> None:
    """Wait until a question's image is on screen; with ``previous`` (an image address), until it is another."""
    wait_shown(page)
    if previous is not None:
        page.wait_for_function("(before) => document.querySelector('#rating-image img.rating-shown')"
                               ".getAttribute('src') !== before", arg=previous, timeout=20000)
        wait_shown(page)
    page.wait_for_timeout(100)


def shown_src(page) -> str:
    """The address of the image on screen."""
    return page.get_attribute("#rating-image img.rating-shown", "src")
