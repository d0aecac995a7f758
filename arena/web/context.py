"""What every tab's handlers share: the settings, the database, the media folder and a random source.

Built once by :func:`arena.web.app.build_app` and captured by the handlers; no module-level state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from arena.media import MediaStore
from arena.settings import Settings
from arena.store import Store


@dataclass
class AppContext:
    settings: Settings
    store: Store
    media: MediaStore
    rng: random.Random = field(default_factory=random.SystemRandom)

    @property
    def export_dir(self) -> Path:
        return self.settings.cache_dir.resolve() / "exports"
