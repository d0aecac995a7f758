"""The server's display renditions: every image rendered for the server's settings before it is served.

At start the server claims its rendition settings for the battles (:func:`datamodel.renditions.claim_display`) and
renders every image that lacks a rendition for them, unshowable ones tried again and recorded ones checked to be in
the folder, before it answers anyone (a display setting changed since the last start, images added by a script or
another process, a media folder restored without its renditions). Afterwards a thread
watches the catalog's change counter (``data_versions``) and renders what a change left unrendered: images added
while the server runs, a rendition that went missing (:func:`datamodel.renditions.withdraw`). Battles draw only
rendered images meanwhile (:mod:`datamodel.renditions`), so nothing is ever rendered while a voter waits.
"""

from __future__ import annotations

import logging
import threading

from datamodel.connection import Store, database_errors
from datamodel.renditions import Renditions, claim_display, unrendered_count
from datamodel.sampling_reads import catalog_version

log = logging.getLogger(__name__)
CHECK_S = 2.0  # how often the thread looks for a catalog change


class RenditionKeeper:
    """Keeps every image of ``store`` rendered as ``renditions`` says (module docstring); :meth:`start`, then
    :meth:`close` when the server stops."""

    def __init__(self, store: Store, renditions: Renditions, check_s: float = CHECK_S):
        self.store, self.renditions, self.check_s = store, renditions, check_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Claim the display settings and render what is missing (on this thread: the server is not serving yet),
        then watch for changes on a daemon thread."""
        db = self.store.db()
        claim_display(db, self.renditions.spec)
        missing = unrendered_count(db, self.renditions.spec.key)
        if missing:
            log.warning("rendering %d image(s) for the display settings %s before serving", missing,
                        self.renditions.spec.key)
        report = self.renditions.render_missing(db, retry_unshowable=True, verify=True)
        if report.unshowable:
            log.warning("%d image(s) cannot be shown and are left out of battles (their originals cannot be read): "
                        "re-import them", report.unshowable)
        self._thread = threading.Thread(target=self._watch, name="rendition-keeper", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        db = self.store.db()
        seen = None
        while not self._stop.wait(self.check_s):
            try:
                version = catalog_version(db)
                if version is None or version != seen:  # no counter (deleted by hand): look at every check
                    self.renditions.render_missing(db)
                    seen = catalog_version(db)
            except database_errors() + (OSError,) as error:  # a busy or full disk: the next check tries again
                log.error("rendering new images failed: %s", error)

    def close(self) -> None:
        self._stop.set()
