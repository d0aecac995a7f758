"""What every tab's handlers share: the settings, the database, the media folder, a random source, the sampler's
statistics, the rate limiters and the leaderboard snapshots.

Built once per app by :func:`arena.web.app.make_context` and captured by the handlers; no module-level state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from sampling.draws import PromptPool
from datamodel.media import MediaStore
from arena.ratelimit import RateLimiter
from sampling.strategies import SamplingParams
from sampling.sampler import SamplingStats
from arena.session import Sampler
from datamodel.settings import Settings
from arena.leaderboard_service import SnapshotService
from datamodel.connection import Store


@dataclass
class AppContext:
    settings: Settings
    store: Store
    media: MediaStore
    rng: random.Random = field(default_factory=random.SystemRandom)
    pool: PromptPool = field(default_factory=PromptPool)
    stats: SamplingStats | None = None  # the sampler's counts and fit, shared by the server's threads
    annotator_limit: RateLimiter | None = None
    client_limit: RateLimiter | None = None
    snapshots: SnapshotService | None = None  # leaderboards, computed in a worker process

    @property
    def sampler(self) -> Sampler:
        return Sampler(self.settings.sampling_strategy, self.stats, self.pool, self.settings.replication_share)

    def __post_init__(self):
        self.stats = SamplingStats(SamplingParams(tie_policy=self.settings.tie_policy))
        self.annotator_limit = RateLimiter(self.settings.rate_limit_annotator_per_minute, "per annotator")
        self.client_limit = RateLimiter(self.settings.rate_limit_client_per_minute, "from one address")
        self.snapshots = SnapshotService(self.store, refresh_s=self.settings.leaderboard_refresh_s,
                                         keep=self.settings.leaderboard_views)
        if self.sampler.reads_stats:  # also checks ARENA_SAMPLING against the registered strategies
            self.stats.start(self.store.db())  # the one full read of the vote counts, on a background thread

    def close(self) -> None:
        """Stop what the app started besides its request threads: the leaderboard worker process, the checkpoints."""
        self.snapshots.close()
        self.store.close()
