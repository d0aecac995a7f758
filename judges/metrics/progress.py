"""One progress bar for every metric loop: tqdm, off when asked (``--quiet``) or when stderr is not a terminal."""

from __future__ import annotations


def progress_bar(total: int, desc: str, *, unit: str = "img", progress: bool = True):
    """A ``tqdm.auto`` bar over ``total`` items; ``progress=False`` hides it, and tqdm hides it itself when its
    stream is not a TTY (``disable=None``), so logs and CI output stay clean."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=True if not progress else None)
