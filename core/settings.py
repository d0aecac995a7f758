"""All configuration in one place.

Each setting is a field of :class:`Settings` with its default, an environment variable and a help text (the table
``settings_table()`` prints, and docs/reference/settings.md lists: ``python -m tools.docs`` writes it). Values are read, in increasing priority, from the defaults,
an optional TOML file (``ARENA_CONFIG``, or ``arena.toml`` in the working directory) and the environment.
Secrets (the admin password, the OpenAI key) are read from the environment only, never from a file.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ratings.votes import TIE_POLICIES

CONFIG_ENV = "ARENA_CONFIG"
DEFAULT_CONFIG_FILE = "arena.toml"


class SettingsError(ValueError):
    """A setting has a value the app cannot use; the message names the setting and the fix."""


def _setting(default: Any, env: str, help: str, *, secret: bool = False, fallback_env: str | None = None):
    """A field with its environment variable; ``fallback_env`` is read when ``env`` is unset (e.g. Gradio's own)."""
    return field(default=default, metadata={"env": env, "help": help, "secret": secret, "fallback_env": fallback_env})


@dataclass(frozen=True)
class QualityRules:
    """The thresholds of the quality rules on human votes (:mod:`datamodel.quality` applies them; the ``quality_*``
    settings below set them)."""

    max_per_hour: int = 900  # one vote every 4 s for a whole hour (a careful voter at 5 s a vote casts 720)
    max_per_3_hours: int = 1800  # an average of 6 s a vote for three hours
    fast_streak: int = 10
    fast_seconds: float = 5.0
    bias_share: float = 0.8
    bias_min_votes: int = 20
    trusted_sources: tuple[str, ...] = ("config",)  # accounts whose rate and speed flags report instead of exclude


@dataclass(frozen=True)
class Settings:
    db_path: Path = _setting(Path("data/arena.db"), "ARENA_DB", "SQLite database file (created, with the demo, on first start).")
    database_url: str = _setting("", "ARENA_DATABASE_URL", "The shared database of several app replicas: a PostgreSQL URL, postgresql://user@host:port/database (the password in PGPASSWORD or ~/.pgpass, or in the URL; environment only). A file path instead, or nothing, keeps SQLite (at ARENA_DB when nothing). See docs/deploying-postgresql.md.", secret=True)
    media_dir: Path = _setting(Path("data/media"), "ARENA_MEDIA_DIR", "Content-addressed image folder (files named by their SHA-256).")
    persistent_dir: Path = _setting(Path("/data"), "ARENA_PERSISTENT_DIR", "Persistent storage (Hugging Face Spaces mount it at /data): when this folder exists, db_path and media_dir default to arena.db and media/ inside it. A db_path or media_dir set in the file or the environment wins.")
    max_image_pixels: int = _setting(64_000_000, "ARENA_MAX_IMAGE_PIXELS", "Largest image accepted, in pixels (width × height), read from the file's header before decoding; larger ones are refused at import. At most 178956970 (Pillow's own decompression-bomb limit).")
    max_image_bytes: int = _setting(100_000_000, "ARENA_MAX_IMAGE_BYTES", "Largest image file accepted, in bytes; a larger file is refused at import from its size, before it is read.")
    display_size: int = _setting(768, "ARENA_DISPLAY_SIZE", "Battle images are served as display renditions this many pixels on the long side, whatever the model's native size, so size does not tell the models apart (originals stay for metrics, exports and judges).")
    display_fit: str = _setting("crop", "ARENA_DISPLAY_FIT", "How an image meets the display aspect: crop (centre crop) or letterbox (whole image, neutral grey bars; the bars of a model whose images have another shape name it in a battle).")
    display_aspect: str = _setting("1:1", "ARENA_DISPLAY_ASPECT", "Aspect ratio (width:height) of every display rendition.")
    display_format: str = _setting("jpeg", "ARENA_DISPLAY_FORMAT", "Format of the display renditions: jpeg or webp (one quality, sRGB, no metadata).")
    display_quality: int = _setting(85, "ARENA_DISPLAY_QUALITY", "Encoder quality of the display renditions, 1-95.")
    display_pad_bytes: int = _setting(262144, "ARENA_DISPLAY_PAD_BYTES", "Display renditions are padded with zero bytes to a multiple of this size, so the response length does not tell the models apart (0: no padding).")
    cache_dir: Path = _setting(Path(".cache"), "ARENA_CACHE_DIR", "Generated caches: tiny demo pipelines, WordNet index files.")
    wordnet_dir: Path = _setting(Path("/usr/share/wordnet"), "ARENA_WORDNET_DIR", "WordNet 3.0 folder (Debian wordnet-base); without root, point it to any WordNet 3.0 'dict' copy.")
    host: str = _setting("127.0.0.1", "ARENA_HOST", "Address the web app listens on. Unset: GRADIO_SERVER_NAME if set (Hugging Face Spaces set it to 0.0.0.0).", fallback_env="GRADIO_SERVER_NAME")
    port: int = _setting(7860, "ARENA_PORT", "Port the web app listens on. Unset: GRADIO_SERVER_PORT if set.", fallback_env="GRADIO_SERVER_PORT")
    trusted_proxies: str = _setting("", "ARENA_TRUSTED_PROXIES", "Comma-separated addresses or networks (CIDR) of the reverse proxies in front of the app, whose X-Forwarded-For and X-Forwarded-Proto headers are believed (e.g. 127.0.0.1 behind a local nginx). Empty: no forwarded header is believed, and the per-address limits count the connecting address.")
    admin_password: str = _setting("", "ARENA_ADMIN_PASSWORD", "Password of the admin tab (environment only). Empty: the admin tab stays locked.", secret=True)
    annotators: str = _setting("", "ARENA_ANNOTATORS", "Annotator accounts as 'name:token,name:token'. Empty: anyone signs up with a name and a token of their choice.")
    min_token_length: int = _setting(8, "ARENA_MIN_TOKEN_LENGTH", "Fewest characters of a token chosen at sign-up or set in ARENA_ANNOTATORS (8 or more; configured tokens are checked at start).")
    guidelines_file: str = _setting("", "ARENA_GUIDELINES_FILE", "TOML file of the annotators' guidelines: general = \"how to vote, Tie against Both bad\" and a [criteria] table of suite = \"what a better image does\", replacing the suites' declared criteria (empty: the declared ones).")
    session_days: float = _setting(30.0, "ARENA_SESSION_DAYS", "Days an annotator stays signed in on a browser across reloads (a token in the browser's local storage, stored hashed, revoked by Sign out); 0: sign in on every visit.")
    demo: bool = _setting(True, "ARENA_DEMO", "Fill an empty database with the bundled demo (prompts, demo models, images).")
    bootstrap_rounds: int = _setting(1000, "ARENA_BOOTSTRAP_ROUNDS", "Bootstrap rounds for the leaderboard's 95% confidence intervals.")
    seed: int = _setting(0, "ARENA_SEED", "Seed of the leaderboard bootstrap.")
    tie_policy: str = _setting("drop", "ARENA_TIE_POLICY", "How ties and both-bad enter the Bradley-Terry fit: drop (the taxonomy benchmark), half (Chatbot Arena) or half_ties_drop_both_bad.")
    min_votes: int = _setting(100, "ARENA_MIN_VOTES", "Votes in the fit a model needs to be ranked on the leaderboard; below it the model is listed, greyed, with its rating and interval but no rank (docs/methods/leaderboard.md argues the default from simulation).")
    provisional_votes: int = _setting(300, "ARENA_PROVISIONAL_VOTES", "Below this many votes in the fit a ranked model is marked provisional (greyed): its rank may still move by several places.")
    leaderboard_order: str = _setting("rating", "ARENA_LEADERBOARD_ORDER", "Order of the leaderboard's ranked models: rating (the fit) or lower (the lower bound of the 95% interval: a model rises only when the votes are sure of it).")
    intervals: str = _setting("bootstrap", "ARENA_INTERVALS", "95% intervals of the arena protocol: bootstrap (ARENA_BOOTSTRAP_ROUNDS refits of redrawn votes) or sandwich (closed form, the CLT of the fit).")
    robustness_top: int = _setting(3, "ARENA_ROBUSTNESS_TOP", "The leaderboard says, for each of this many top places, how many votes dropped would change who holds it (influence functions, confirmed by refitting); 0: no audit.")
    rating_prior_sd: float = _setting(400.0, "ARENA_RATING_PRIOR_SD", "Spread (Elo points) of the leaderboard's weak normal prior on each rating around the mean 1000: it keeps a model that won or lost a handful of votes, and its bootstrap interval, within a few spreads of the mean instead of thousands of points away; 0: no prior (the pure Bradley-Terry fit).")
    leaderboard_refresh_s: float = _setting(30.0, "ARENA_LEADERBOARD_REFRESH_S", "A leaderboard is recomputed in the background, off the vote path, when the data changed and its snapshot is at least this many seconds old (0: as soon as it changed); viewers see the latest snapshot at once.")
    leaderboard_worker_nice: int = _setting(19, "ARENA_LEADERBOARD_WORKER_NICE", "Niceness added to the server's by the process that computes the leaderboards, 0-19: 19 lets the votes go first on a busy server; lower it (0: the server's priority) on a machine shared with other busy programs (image generation, other services), where a worker at 19 can wait tens of seconds for the CPU and the leaderboard lags.")
    leaderboard_history_days: int = _setting(365, "ARENA_LEADERBOARD_HISTORY_DAYS", "Days of leaderboard history kept: each computed leaderboard is also kept as that day's board (the last of the day), for the rating-history chart and the board as of a date; older days are dropped (0: no history).")
    personal_board_votes: int = _setting(20, "ARENA_PERSONAL_BOARD_VOTES", "After this many votes the arena page offers the annotator their own leaderboard (the Leaderboard tab with the Voter menu on them); 0: never.")
    leaderboard_views: int = _setting(32, "ARENA_LEADERBOARD_VIEWS", "Sets of leaderboard filters whose snapshots are kept (the least recently viewed go first); also the most computations that may wait.")
    agreement_min_shared: int = _setting(5, "ARENA_AGREEMENT_MIN_SHARED", "Cohen's kappa is listed for pairs of annotators who share at least this many battles.")
    agreement_max_pairs: int = _setting(50, "ARENA_AGREEMENT_MAX_PAIRS", "At most this many pairs of annotators are listed, those sharing the most battles.")
    change_log_keep_s: float = _setting(86_400.0, "ARENA_CHANGE_LOG_KEEP_S", "Seconds the change logs the samplers and the leaderboard follow vote by vote (vote_changes, kwise_vote_changes) keep a row; the server prunes older rows every 10 minutes, so the logs hold about this long of votes instead of every vote ever cast. A reader that read nothing for longer (a replica suspended, a four-image suite no one drew from) reads its counts again, once. 0: never prune (docs/methods/sampling.md argues the default).")
    sampling_strategy: str = _setting("uniform", "ARENA_SAMPLING", "How battles pick their two models: uniform (the published protocol), balanced or active (see docs/methods/sampling.md).")
    four_image_suites: str = _setting("", "ARENA_FOUR_IMAGE_SUITES", "Comma-separated suites whose prompts are also voted in the four-image mode: the Four images tab shows four anonymous images of one prompt from four models and the annotator picks the best (and optionally the worst); the votes enter the leaderboard through the kwise-rank-breaking protocol (docs/methods/rating-protocols.md). Empty: no four-image mode (the default).")
    four_image_strategy: str = _setting("ksort-ucb", "ARENA_FOUR_IMAGE_STRATEGY", "How the four-image mode draws its four models: uniform (four distinct models at random) or ksort-ucb (K-Sort Arena's UCB matchmaking; see docs/methods/sampling.md).")
    warmup_battles: int = _setting(200, "ARENA_WARMUP_BATTLES", "A model added to a running arena gets its first this many battles fast, whatever the strategy, and its interval is marked provisional until then (0: no warm-up; see docs/methods/sampling.md).")
    warmup_share: float = _setting(0.5, "ARENA_WARMUP_SHARE", "At most this share of battles goes to models warming up, so the rest of the study goes on.")
    replication_share: float = _setting(0.0, "ARENA_REPLICATION_SHARE", "Share of battles re-shown to a second annotator (same prompt and images) to measure inter-annotator agreement.")
    quality_max_per_hour: int = _setting(900, "ARENA_QUALITY_MAX_PER_HOUR", "Votes beyond this many in an hour from one annotator are flagged excluded (the page warns a tenth before). 900: one vote every 4 s for a whole hour; a careful voter at 5 s a vote casts 720.")
    quality_max_per_3_hours: int = _setting(1800, "ARENA_QUALITY_MAX_PER_3_HOURS", "Votes beyond this many in 3 hours from one annotator are flagged excluded (the page warns a tenth before). 1800: an average of 6 s a vote for three hours.")
    quality_fast_streak: int = _setting(10, "ARENA_QUALITY_FAST_STREAK", "Runs of this many consecutive fast votes are flagged excluded.")
    quality_fast_seconds: float = _setting(5.0, "ARENA_QUALITY_FAST_SECONDS", "A vote less than this many seconds after the previous one counts as fast.")
    quality_bias_share: float = _setting(0.8, "ARENA_QUALITY_BIAS_SHARE", "An annotator whose votes pick one side or one model at least this often is flagged.")
    quality_bias_min_votes: int = _setting(20, "ARENA_QUALITY_BIAS_MIN_VOTES", "The side/model bias rule applies from this many votes on.")
    quality_trust_configured: bool = _setting(True, "ARENA_QUALITY_TRUST_CONFIGURED", "Accounts from ARENA_ANNOTATORS are trusted: the rate and speed rules report their votes (noted for the admin) instead of excluding them. Accounts made by open sign-up keep the public-arena rules.")
    rate_limit_annotator_per_minute: int = _setting(30, "ARENA_RATE_LIMIT_ANNOTATOR", "Votes one annotator may cast per minute (0: no limit); more are refused with a message.")
    rate_limit_client_per_minute: int = _setting(120, "ARENA_RATE_LIMIT_CLIENT", "Votes one client address may cast per minute, and, counted apart, battles it may load without voting (0: no limit).")
    rate_limit_skips_per_minute: int = _setting(20, "ARENA_RATE_LIMIT_SKIPS", "Battles one annotator may load without voting per minute: sign-in, Skip, a suite change (0: no limit); each writes a battle row.")
    rate_limit_pages_per_minute: int = _setting(120, "ARENA_RATE_LIMIT_PAGES", "New pages (browser tabs or API sessions) one client address may open per minute, counted at the front door before any work (0: no limit): room for a class of people behind one address opening the arena together.")
    page_sessions: int = _setting(4000, "ARENA_PAGE_SESSIONS", "Page sessions the server holds (12 KB each, up to about 100 KB for a page that opened the leaderboard); past them the least recently used one where nobody is signed in goes first, so this bounds the memory a flood of new pages can take.")
    max_request_bytes: int = _setting(1_048_576, "ARENA_MAX_REQUEST_BYTES", "Largest request body the server reads, in bytes; a larger one is refused (413) before it is read. The page's own requests are a few kilobytes.")
    login_max_failures: int = _setting(5, "ARENA_LOGIN_MAX_FAILURES", "Failed sign-ins one client address may make within ARENA_LOGIN_WINDOW_S (failed admin unlocks are counted apart) before it must wait ARENA_LOGIN_LOCKOUT_S, doubled at each further failure (0: no limit).")
    login_max_failures_overall: int = _setting(100, "ARENA_LOGIN_MAX_FAILURES_OVERALL", "Failed sign-ins from all addresses together within ARENA_LOGIN_WINDOW_S (admin unlocks apart) before every address must wait the same way (0: no limit).")
    login_window_s: float = _setting(900.0, "ARENA_LOGIN_WINDOW_S", "Seconds a failed sign-in or admin unlock is remembered by the throttle.")
    login_lockout_s: float = _setting(30.0, "ARENA_LOGIN_LOCKOUT_S", "First wait in seconds after too many failed sign-ins or unlocks; it doubles with each further failure in the window.")
    sqlite_synchronous: str = _setting("FULL", "ARENA_SQLITE_SYNCHRONOUS", "SQLite synchronous mode: FULL survives power loss, NORMAL survives a process crash.")
    judge_base_url: str = _setting("", "ARENA_JUDGE_BASE_URL", "OpenAI-compatible endpoint for judges; empty: api.openai.com.")
    judge_model: str = _setting("gpt-4o-mini", "ARENA_JUDGE_MODEL", "Model the GPT judge asks.")
    judge_concurrency: int = _setting(8, "ARENA_JUDGE_CONCURRENCY", "Judge API requests in flight at once.")
    judge_timeout_s: float = _setting(60.0, "ARENA_JUDGE_TIMEOUT_S", "Seconds before a judge API request times out (then it is retried).")
    judge_max_retries: int = _setting(5, "ARENA_JUDGE_MAX_RETRIES", "Retries of a judge request after a 429, a 5xx, a timeout or a lost connection (exponential backoff with jitter).")
    judge_retry_base_s: float = _setting(1.0, "ARENA_JUDGE_RETRY_BASE_S", "First backoff delay in seconds; it doubles with each retry (capped at 60 s).")
    judge_image_detail: str = _setting("high", "ARENA_JUDGE_IMAGE_DETAIL", "Detail the judge sees images in: high (the published protocol), low or auto.")
    judge_templates: str = _setting("", "ARENA_JUDGE_TEMPLATES", "TOML file replacing judge prompt templates (keys: pairwise, commonsense_fit, semvar, saneval_*); empty: the protocol texts.")
    judge_price_input_per_mtok: float = _setting(0.15, "ARENA_JUDGE_PRICE_INPUT", "US dollars per million input tokens, for cost estimates (gpt-4o-mini's price).")
    judge_price_output_per_mtok: float = _setting(0.60, "ARENA_JUDGE_PRICE_OUTPUT", "US dollars per million output tokens, for cost estimates (gpt-4o-mini's price).")
    image_api_base_url: str = _setting("", "ARENA_IMAGE_API_BASE_URL", "OpenAI-compatible endpoint of the API image models (DALL-E 3, gpt-image-1: registry models of kind api); empty: api.openai.com. The key is OPENAI_API_KEY.")
    image_api_concurrency: int = _setting(4, "ARENA_IMAGE_API_CONCURRENCY", "Image API requests in flight at once.")
    image_api_timeout_s: float = _setting(180.0, "ARENA_IMAGE_API_TIMEOUT_S", "Seconds before an image API request times out (then it is retried).")
    image_api_max_retries: int = _setting(5, "ARENA_IMAGE_API_MAX_RETRIES", "Retries of an image request after a 429, a 5xx, a timeout or a lost connection (exponential backoff with jitter, as the judges).")
    image_api_retry_base_s: float = _setting(2.0, "ARENA_IMAGE_API_RETRY_BASE_S", "First backoff delay in seconds of an image request; it doubles with each retry (capped at 60 s).")
    open_prompts: str = _setting("demo", "ARENA_OPEN_PROMPTS", "Open prompts: the annotator types a prompt and two models drawn by the sampler make its images live (docs/running-a-study.md). on, off, or demo: on in an arena that holds the bundled demo, off in any other.")
    open_prompt_models: str = _setting("", "ARENA_OPEN_PROMPT_MODELS", "Comma-separated registry names of the models that answer open prompts (built-in, demo-* or from ARENA_MODELS_FILE). Empty: in the demo, its painters and its tiny diffusers pipeline (when torch is installed); elsewhere open prompts need this.")
    models_file: str = _setting("", "ARENA_MODELS_FILE", "TOML or JSON models file (the format of `python -m generators run --models-file`) adding or overriding registry models for open prompts: weights folders, serve_gpus, serve_min_replicas, serve_max_replicas, serve_target_queue, serve_replica_queue.")
    open_prompt_max_chars: int = _setting(400, "ARENA_OPEN_PROMPT_MAX_CHARS", "Longest open prompt, in characters (any language and script; counted after Unicode NFC normalisation).")
    open_prompt_timeout_s: float = _setting(120.0, "ARENA_OPEN_PROMPT_TIMEOUT_S", "Seconds both images of an open prompt may take, queueing included; after that the battle is called off, the late model recorded as timed out and nothing shown.")
    open_prompt_concurrency: int = _setting(16, "ARENA_OPEN_PROMPT_CONCURRENCY", "Open prompts the web app serves at once; more wait in Gradio's queue (the page shows their place).")
    rate_limit_open_prompts_per_minute: int = _setting(6, "ARENA_RATE_LIMIT_OPEN_PROMPTS", "Open prompts one annotator may send per minute, and, counted apart, one client address five times as many (0: no limit); each costs two generations.")
    serving_devices: str = _setting("", "ARENA_SERVING_DEVICES", "Devices of the embedded generation workers, comma-separated (cuda:0,cuda:1 or cpu); one worker process per device. Empty: every visible GPU, else the CPU.")
    serving_resident_models: int = _setting(0, "ARENA_SERVING_RESIDENT", "Models each embedded worker keeps loaded on its device; another model is loaded on demand and the least recently used one unloaded. 0: one per GPU (a full-size model fills it), and every served model on the CPU (the tiny stand-ins of the demo and the tests).")
    ray_address: str = _setting("", "ARENA_RAY_ADDRESS", "Address of a Ray cluster (ray://host:10001 or host:6379) whose Ray Serve deployments answer open prompts (python -m generators ray-deploy puts them there); empty: the embedded workers. See docs/deploying.md.")
    moderation_model: str = _setting("", "ARENA_MODERATION_MODEL", "Moderation model asked about each open prompt at the judges' OpenAI-compatible endpoint (ARENA_JUDGE_BASE_URL, OPENAI_API_KEY), e.g. omni-moderation-latest. Empty: the local rule list (ARENA_MODERATION_RULES).")
    moderation_rules: str = _setting("", "ARENA_MODERATION_RULES", "TOML file of the local moderation rules used when no moderation model is set ([[rule]] category = ..., pattern = a regular expression, why = ...). Empty: the built-in list (judges/data/moderation_rules.toml).")
    safety_classifier: str = _setting("", "ARENA_SAFETY_CLASSIFIER", "Image classifier (a transformers image-classification folder or hub id) that checks the open-prompt images of models that ship no safety checker of their own. Empty: those images are not checked (the server says so at start).")
    safety_labels: str = _setting("nsfw", "ARENA_SAFETY_LABELS", "Comma-separated labels of the safety classifier that flag an image.")
    safety_threshold: float = _setting(0.5, "ARENA_SAFETY_THRESHOLD", "Score of a flagging label at or above which an image is flagged and never shown.")

    def __post_init__(self):
        if not 0 < self.port < 65536:
            raise SettingsError(f"port must be between 1 and 65535, got {self.port}. Set ARENA_PORT.")
        if self.tie_policy not in TIE_POLICIES:
            raise SettingsError(
                f"tie_policy must be drop, half or half_ties_drop_both_bad, got {self.tie_policy!r}. Set ARENA_TIE_POLICY."
            )
        _check_media(self)
        if "://" in self.database_url and not self.database_url.startswith(("postgresql://", "postgres://")):
            raise SettingsError("ARENA_DATABASE_URL must be a PostgreSQL URL (postgresql://user@host:port/database) "
                                "or a SQLite file path; other databases are not supported.")
        if self.sqlite_synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise SettingsError(f"sqlite_synchronous must be FULL, NORMAL or EXTRA, got {self.sqlite_synchronous!r}.")
        # sampling_strategy is checked against the registered strategies where the sampler is built
        # (arena.session.Sampler; the data model does not import sampling)
        if not 0.0 <= self.replication_share <= 1.0:
            raise SettingsError(f"replication_share is a share between 0 and 1, got {self.replication_share}.")
        if self.warmup_battles < 0 or not 0.0 < self.warmup_share < 1.0:
            raise SettingsError(f"warmup_battles must be 0 (no warm-up) or more and warmup_share a share strictly "
                                f"between 0 and 1, got {self.warmup_battles} and {self.warmup_share}. Set "
                                "ARENA_WARMUP_BATTLES and ARENA_WARMUP_SHARE.")
        if self.four_image_strategy not in ("uniform", "ksort-ucb"):
            raise SettingsError(f"four_image_strategy must be uniform or ksort-ucb, got {self.four_image_strategy!r}. "
                                "Set ARENA_FOUR_IMAGE_STRATEGY.")
        if self.rating_prior_sd < 0:
            raise SettingsError("rating_prior_sd must be 0 (no prior) or more Elo points. Set ARENA_RATING_PRIOR_SD.")
        if self.min_votes < 0 or self.provisional_votes < 0 or self.robustness_top < 0:
            raise SettingsError("min_votes, provisional_votes and robustness_top must be 0 or more. Set ARENA_MIN_VOTES, "
                                "ARENA_PROVISIONAL_VOTES and ARENA_ROBUSTNESS_TOP.")
        if self.leaderboard_order not in ("rating", "lower"):
            raise SettingsError(f"leaderboard_order must be rating or lower, got {self.leaderboard_order!r}. Set "
                                "ARENA_LEADERBOARD_ORDER.")
        if self.intervals not in ("bootstrap", "sandwich"):
            raise SettingsError(f"intervals must be bootstrap or sandwich, got {self.intervals!r}. Set ARENA_INTERVALS.")
        if self.bootstrap_rounds < 0:
            raise SettingsError("bootstrap_rounds must be 0 or more. Set ARENA_BOOTSTRAP_ROUNDS.")
        if self.leaderboard_history_days < 0 or self.personal_board_votes < 0:
            raise SettingsError("leaderboard_history_days and personal_board_votes must be 0 or more. Set "
                                "ARENA_LEADERBOARD_HISTORY_DAYS and ARENA_PERSONAL_BOARD_VOTES.")
        if self.leaderboard_refresh_s < 0 or self.leaderboard_views < 1:
            raise SettingsError("leaderboard_refresh_s must be 0 or more and leaderboard_views 1 or more. Set "
                                "ARENA_LEADERBOARD_REFRESH_S and ARENA_LEADERBOARD_VIEWS.")
        if self.change_log_keep_s < 0:
            raise SettingsError(f"change_log_keep_s must be 0 or more seconds, got {self.change_log_keep_s}. Set "
                                "ARENA_CHANGE_LOG_KEEP_S (0: never prune).")
        if not 0 <= self.leaderboard_worker_nice <= 19:
            raise SettingsError(f"leaderboard_worker_nice must be 0 to 19, got {self.leaderboard_worker_nice}. Set "
                                "ARENA_LEADERBOARD_WORKER_NICE.")
        if self.agreement_min_shared < 1 or self.agreement_max_pairs < 1:
            raise SettingsError("agreement_min_shared and agreement_max_pairs must be 1 or more. Set "
                                "ARENA_AGREEMENT_MIN_SHARED and ARENA_AGREEMENT_MAX_PAIRS.")
        if self.min_token_length < 8:
            raise SettingsError(f"min_token_length must be 8 or more, got {self.min_token_length}. "
                                "Set ARENA_MIN_TOKEN_LENGTH.")
        for name, token in parse_accounts(self.annotators).items():
            if len(token) < self.min_token_length:
                raise SettingsError(f"ARENA_ANNOTATORS: the token of {name!r} has {len(token)} characters; tokens "
                                    f"need at least {self.min_token_length} (ARENA_MIN_TOKEN_LENGTH). Give {name!r} "
                                    "a longer token.")
        _check_limits(self)
        if self.judge_concurrency < 1:
            raise SettingsError(f"judge_concurrency must be 1 or more, got {self.judge_concurrency}. Set ARENA_JUDGE_CONCURRENCY.")
        if self.judge_timeout_s <= 0 or self.judge_max_retries < 0 or self.judge_retry_base_s < 0:
            raise SettingsError("judge_timeout_s must be positive and judge_max_retries, judge_retry_base_s 0 or more. "
                                "Set ARENA_JUDGE_TIMEOUT_S, ARENA_JUDGE_MAX_RETRIES, ARENA_JUDGE_RETRY_BASE_S.")
        if self.judge_image_detail not in ("high", "low", "auto"):
            raise SettingsError(f"judge_image_detail must be high, low or auto, got {self.judge_image_detail!r}. "
                                "Set ARENA_JUDGE_IMAGE_DETAIL.")
        if self.image_api_concurrency < 1 or self.image_api_timeout_s <= 0 or self.image_api_max_retries < 0 \
                or self.image_api_retry_base_s < 0:
            raise SettingsError("image_api_concurrency must be 1 or more, image_api_timeout_s positive and "
                                "image_api_max_retries, image_api_retry_base_s 0 or more. Set ARENA_IMAGE_API_CONCURRENCY, "
                                "ARENA_IMAGE_API_TIMEOUT_S, ARENA_IMAGE_API_MAX_RETRIES, ARENA_IMAGE_API_RETRY_BASE_S.")

        _check_open_prompts(self)

    @property
    def four_image_suite_names(self) -> tuple[str, ...]:
        """The suites of the four-image mode (:attr:`four_image_suites`), in the order given."""
        return tuple(name.strip() for name in self.four_image_suites.split(",") if name.strip())

    @property
    def database(self) -> Path | str:
        """What :func:`datamodel.connection.connect` opens: the PostgreSQL URL of ``database_url``, else the SQLite
        file it names, else ``db_path``."""
        if not self.database_url:
            return self.db_path
        return self.database_url if "://" in self.database_url else Path(self.database_url)

    @property
    def quality_rules(self) -> QualityRules:
        return QualityRules(
            max_per_hour=self.quality_max_per_hour, max_per_3_hours=self.quality_max_per_3_hours,
            fast_streak=self.quality_fast_streak, fast_seconds=self.quality_fast_seconds,
            bias_share=self.quality_bias_share, bias_min_votes=self.quality_bias_min_votes,
            trusted_sources=("config",) if self.quality_trust_configured else (),
        )

    @property
    def trusted_proxy_hosts(self) -> list[str]:
        """The addresses and networks of ``trusted_proxies``, as uvicorn's ``forwarded_allow_ips`` takes them."""
        return [entry.strip() for entry in self.trusted_proxies.split(",") if entry.strip()]

    @property
    def annotator_accounts(self) -> dict[str, str]:
        return parse_accounts(self.annotators)

    def replace(self, **changes) -> Settings:
        return dataclasses.replace(self, **changes)


def _check_limits(settings: Settings) -> None:
    """Refuse trusted proxies that are not addresses and throttle settings the app cannot use."""
    import ipaddress

    for entry in settings.trusted_proxy_hosts:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise SettingsError(f"trusted_proxies: {entry!r} is not an IP address or network. List the addresses of "
                                "your reverse proxies, e.g. ARENA_TRUSTED_PROXIES=127.0.0.1,10.0.0.0/8 (no host "
                                "names, no '*': trusting every client would let anyone pick their address).") from None
    if min(settings.rate_limit_skips_per_minute, settings.rate_limit_pages_per_minute, settings.login_max_failures,
           settings.login_max_failures_overall) < 0:
        raise SettingsError("rate_limit_skips_per_minute, rate_limit_pages_per_minute, login_max_failures and "
                            "login_max_failures_overall must be 0 (no limit) or more. Set ARENA_RATE_LIMIT_SKIPS, "
                            "ARENA_RATE_LIMIT_PAGES, ARENA_LOGIN_MAX_FAILURES and ARENA_LOGIN_MAX_FAILURES_OVERALL.")
    if settings.page_sessions < 100:
        raise SettingsError(f"page_sessions must be 100 or more, got {settings.page_sessions}. Set ARENA_PAGE_SESSIONS.")
    if settings.max_request_bytes < 65_536:
        raise SettingsError(f"max_request_bytes must be 65536 or more (the page's own requests need that room), got "
                            f"{settings.max_request_bytes}. Set ARENA_MAX_REQUEST_BYTES.")
    if settings.login_window_s <= 0 or settings.login_lockout_s <= 0:
        raise SettingsError("login_window_s and login_lockout_s must be positive. Set ARENA_LOGIN_WINDOW_S and "
                            "ARENA_LOGIN_LOCKOUT_S.")


def _check_media(settings: Settings) -> None:
    """Refuse image limits and display rendition settings the app cannot use, naming the variable to set."""
    if not 0 < settings.max_image_pixels <= 178_956_970:
        raise SettingsError(f"max_image_pixels must be between 1 and 178956970 (Pillow's own limit), got "
                            f"{settings.max_image_pixels}. Set ARENA_MAX_IMAGE_PIXELS.")
    if settings.max_image_bytes < 1:
        raise SettingsError(f"max_image_bytes must be 1 or more, got {settings.max_image_bytes}. "
                            "Set ARENA_MAX_IMAGE_BYTES.")
    if not 16 <= settings.display_size <= 4096:
        raise SettingsError(f"display_size must be between 16 and 4096 pixels, got {settings.display_size}. "
                            "Set ARENA_DISPLAY_SIZE.")
    if settings.display_fit not in ("letterbox", "crop"):
        raise SettingsError(f"display_fit must be letterbox or crop, got {settings.display_fit!r}. "
                            "Set ARENA_DISPLAY_FIT.")
    width, colon, height = settings.display_aspect.partition(":")
    if not (colon and width.strip().isdigit() and height.strip().isdigit() and int(width) > 0 and int(height) > 0
            and max(int(width), int(height)) <= 64 * min(int(width), int(height))):
        raise SettingsError(f"display_aspect must be width:height such as 1:1 or 4:3, got "
                            f"{settings.display_aspect!r}. Set ARENA_DISPLAY_ASPECT.")
    if settings.display_format not in ("jpeg", "webp"):
        raise SettingsError(f"display_format must be jpeg or webp, got {settings.display_format!r}. "
                            "Set ARENA_DISPLAY_FORMAT.")
    if not 1 <= settings.display_quality <= 95:
        raise SettingsError(f"display_quality must be between 1 and 95, got {settings.display_quality}. "
                            "Set ARENA_DISPLAY_QUALITY.")
    if settings.display_pad_bytes < 0:
        raise SettingsError(f"display_pad_bytes must be 0 (no padding) or more, got {settings.display_pad_bytes}. "
                            "Set ARENA_DISPLAY_PAD_BYTES.")


def _check_open_prompts(settings: Settings) -> None:
    """Refuse open-prompt, serving, moderation and safety settings the app cannot use, naming the variable to set."""
    if settings.open_prompts not in ("on", "off", "demo"):
        raise SettingsError(f"open_prompts must be on, off or demo, got {settings.open_prompts!r}. "
                            "Set ARENA_OPEN_PROMPTS.")
    if not 1 <= settings.open_prompt_max_chars <= 10_000:
        raise SettingsError(f"open_prompt_max_chars must be between 1 and 10000, got "
                            f"{settings.open_prompt_max_chars}. Set ARENA_OPEN_PROMPT_MAX_CHARS.")
    if settings.open_prompt_timeout_s <= 0 or settings.open_prompt_concurrency < 1:
        raise SettingsError("open_prompt_timeout_s must be positive and open_prompt_concurrency 1 or more. Set "
                            "ARENA_OPEN_PROMPT_TIMEOUT_S and ARENA_OPEN_PROMPT_CONCURRENCY.")
    if settings.rate_limit_open_prompts_per_minute < 0 or settings.serving_resident_models < 0:
        raise SettingsError("rate_limit_open_prompts_per_minute must be 0 (no limit) or more and "
                            "serving_resident_models 0 (automatic) or more. Set ARENA_RATE_LIMIT_OPEN_PROMPTS and "
                            "ARENA_SERVING_RESIDENT.")
    if not 0.0 < settings.safety_threshold <= 1.0:
        raise SettingsError(f"safety_threshold is a score in (0, 1], got {settings.safety_threshold}. "
                            "Set ARENA_SAFETY_THRESHOLD.")


def parse_accounts(text: str) -> dict[str, str]:
    """Parse 'name:token,name:token' into {name: token}."""
    accounts: dict[str, str] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, sep, token = entry.partition(":")
        if not sep or not name.strip() or not token.strip():
            raise SettingsError(
                f"annotator account {entry!r} is not 'name:token'. Write ARENA_ANNOTATORS as 'alice:secret1,bob:secret2'."
            )
        accounts[name.strip()] = token.strip()
    return accounts


def settings_table() -> list[tuple[str, str, Any, str]]:
    """(name, environment variable, default, help) for every setting."""
    return [(f.name, f.metadata["env"], f.default, f.metadata["help"]) for f in dataclasses.fields(Settings)]


def settings_markdown() -> str:
    """The settings table in Markdown (``python -m arena settings --markdown``, docs/reference/settings.md)."""
    rows = ["| Setting | Environment variable | Default | Meaning |", "|---|---|---|---|"]
    for name, env, default, help_text in settings_table():
        shown = f"`{default}`" if str(default) != "" else "(empty)"
        rows.append(f"| `{name}` | `{env}` | {shown} | {help_text.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"


def _convert(name: str, kind: Any, value: Any) -> Any:
    kind = {"Path": Path, "str": str, "int": int, "float": float, "bool": bool}.get(kind, kind)
    if kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise SettingsError(f"setting {name} must be true or false, got {value!r}.")
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise SettingsError(f"setting {name} must be a {kind.__name__}, got {value!r}.") from None


def load_settings(env: Mapping[str, str] | None = None, config_file: str | Path | None = None, **overrides) -> Settings:
    """Defaults, then the TOML file, then a fallback variable (``GRADIO_SERVER_NAME``/``_PORT``), then the setting's
    own ``ARENA_*`` variable, then ``overrides`` (command-line flags); each later one wins. When ``persistent_dir``
    exists, the database and media default into it unless set by any of these."""
    env = os.environ if env is None else env
    path = Path(config_file or env.get(CONFIG_ENV) or DEFAULT_CONFIG_FILE)
    from_file: dict[str, Any] = {}
    if path.exists():
        try:
            from_file = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as error:
            raise SettingsError(f"{path}: not valid TOML ({error}). Fix the file or unset {CONFIG_ENV}.") from None
    elif config_file or env.get(CONFIG_ENV):
        raise SettingsError(f"config file {path} does not exist. Create it or unset {CONFIG_ENV}.")
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in from_file.items():
        if key == "annotators" and isinstance(value, dict):
            value = ",".join(f"{name}:{token}" for name, token in value.items())
        if key not in fields:
            raise SettingsError(f"{path}: unknown setting {key!r}. Known settings: {', '.join(fields)}.")
        if fields[key].metadata["secret"]:
            raise SettingsError(f"{path}: {key} is a secret; set it in the environment as {fields[key].metadata['env']}.")
        values[key] = value
    for name, f in fields.items():
        if f.metadata["env"] in env:
            values[name] = env[f.metadata["env"]]
        elif f.metadata["fallback_env"] and f.metadata["fallback_env"] in env:
            values[name] = env[f.metadata["fallback_env"]]  # e.g. GRADIO_SERVER_NAME: over the file, under ARENA_*
    values.update(overrides)
    persistent = Path(values.get("persistent_dir", fields["persistent_dir"].default))
    if persistent.is_dir():
        values.setdefault("db_path", persistent / "arena.db")
        values.setdefault("media_dir", persistent / "media")
    return Settings(**{name: _convert(name, fields[name].type, value) for name, value in values.items()})
