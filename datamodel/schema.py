"""The arena database schema and its migrations.

Migrations are plain functions taking a database, applied in order, each in one transaction; ``PRAGMA
user_version`` holds how many have run. To change the schema, append a function to ``MIGRATIONS``; never edit one
that has shipped. A PostgreSQL database (:mod:`datamodel.schema_postgresql`) starts from a baseline equal to the
first fifteen and runs every later one too, so a migration appended now works on both engines: where their SQL
differs it picks its text with :func:`datamodel.dialect.pick` (tests/test_engines.py compares the two schemas).

Tables (names meant to be read in any SQLite browser):

- ``models``: the text-to-image systems being compared.
- ``prompts``: one row per prompt text: ``suite`` (taxonomy, commonsense, ...), ``subset`` (Easy, Hypernymy, ...),
  ``variant`` (with_definition / without_definition, or ''), ``item_key`` (synset id, pair id, ...), ``role``
  (p1 / p2, anchor / permutation / paraphrase, ...: prompts of one item share ``item_key`` and differ by role),
  ``text`` and ``metadata`` (JSON: definition, hypernyms, cohyponyms, expected description, category, ...).
- ``images``: a model's image for a prompt, stored in the media folder under its SHA-256 (``media_hash``).
- ``annotators``: people who vote; tokens are stored hashed; names are looked up normalised and look-alikes are
  refused (:func:`_annotator_identity`).
- ``battles``: a prompt and two images shown left (A) and right (B), to whom, in which session, when.
- ``votes``: at most one per battle; outcome relative to the displayed positions; ``excluded`` keeps flagged
  votes out of ratings without deleting them.
- ``metrics``: automatic scores per image or per model; ``metric_directions``: which values of each are better
  (:func:`_metric_directions`).
- ``data_versions`` and ``leaderboard_snapshots``: change counters and computed leaderboards (:func:`_study_scale`).
- ``image_requests``: the images an image API answered, so a resumed run never pays twice (:func:`_image_requests`).
- ``rating_assignments``, ``rating_servings`` and ``ratings``: human rating tasks beside the battles (one image, one
  question, an answer on the task's scale), opened by an admin (:func:`_human_ratings`).
- ``display`` and the view ``battle_images``: the images battles may draw, rendered and not withheld
  (:func:`_shown_images`).
- ``generations``: the images open prompts asked models for, with their latency and cost (:func:`_open_prompts`);
  their prompts and images move the ``open_prompts`` counter of ``data_versions``, not ``catalog``
  (:func:`_open_prompts_counter`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from datamodel.database import Database
from datamodel.dialect import is_postgres, pick, unixepoch_text
from ratings.votes import OUTCOMES  # noqa: F401  (the votes table's CHECK constraint lists them)

VOTER_KINDS = ("human", "judge")


def _initial_schema(db: Database) -> None:
    db.execute(
        """
        CREATE TABLE models (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL DEFAULT 'imported',  -- demo | diffusers | imported
            description TEXT NOT NULL DEFAULT '',
            config TEXT NOT NULL DEFAULT '{}',        -- JSON: pipeline class, weights, defaults
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )"""
    )
    db.execute(
        """
        CREATE TABLE prompts (
            id INTEGER PRIMARY KEY,
            suite TEXT NOT NULL,
            subset TEXT NOT NULL DEFAULT '',
            variant TEXT NOT NULL DEFAULT '',
            item_key TEXT NOT NULL,
            role TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (suite, subset, item_key, variant, role)
        )"""
    )
    db.execute("CREATE INDEX prompts_suite ON prompts (suite, subset, variant)")
    db.execute(
        """
        CREATE TABLE images (
            id INTEGER PRIMARY KEY,
            prompt_id INTEGER NOT NULL REFERENCES prompts(id),
            model_id INTEGER NOT NULL REFERENCES models(id),
            idx INTEGER NOT NULL DEFAULT 0,          -- generation index for several images per prompt
            seed INTEGER,
            media_hash TEXT NOT NULL,                -- SHA-256 of the file in the media folder
            media_ext TEXT NOT NULL,                 -- png | jpg | webp
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            params TEXT NOT NULL DEFAULT '{}',       -- JSON: generation parameters or import source
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (prompt_id, model_id, idx)
        )"""
    )
    db.execute("CREATE INDEX images_model ON images (model_id)")
    db.execute(
        """
        CREATE TABLE annotators (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            token_hash TEXT NOT NULL,                -- scrypt hash, never the token itself
            source TEXT NOT NULL DEFAULT 'signup',   -- config | signup
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )"""
    )
    db.execute(
        """
        CREATE TABLE battles (
            id TEXT PRIMARY KEY,                     -- unguessable token
            prompt_id INTEGER NOT NULL REFERENCES prompts(id),
            left_image_id INTEGER NOT NULL REFERENCES images(id),   -- shown as A
            right_image_id INTEGER NOT NULL REFERENCES images(id),  -- shown as B
            served_to_kind TEXT NOT NULL CHECK (served_to_kind IN ('human', 'judge')),
            annotator_id INTEGER REFERENCES annotators(id),
            judge TEXT,
            session_id TEXT NOT NULL,
            media_token TEXT NOT NULL UNIQUE,        -- unguessable; the page loads the two images through it
            strategy TEXT NOT NULL DEFAULT 'uniform',
            served_at REAL NOT NULL,                 -- unix time the battle was drawn for its session
            CHECK (left_image_id != right_image_id)
        )"""
    )
    db.execute("CREATE INDEX battles_prompt ON battles (prompt_id)")
    db.execute(
        """
        CREATE TABLE votes (
            id INTEGER PRIMARY KEY,
            battle_id TEXT NOT NULL UNIQUE REFERENCES battles(id),
            voter TEXT NOT NULL,                     -- annotator name or judge name
            voter_kind TEXT NOT NULL CHECK (voter_kind IN ('human', 'judge')),
            annotator_id INTEGER REFERENCES annotators(id),
            outcome TEXT NOT NULL CHECK (outcome IN ('A', 'B', 'tie', 'both_bad')),
            seconds_to_vote REAL,                    -- from the battle being shown to the vote
            voted_at REAL NOT NULL,                  -- unix time of the vote
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            excluded INTEGER NOT NULL DEFAULT 0,
            excluded_reason TEXT NOT NULL DEFAULT '',
            reviewed INTEGER NOT NULL DEFAULT 0      -- 1: an admin decided; the quality rules leave it alone
        )"""
    )
    db.execute("CREATE INDEX votes_voter ON votes (voter_kind, voter)")
    db.execute("CREATE INDEX votes_annotator ON votes (annotator_id)")
    db.execute(
        """
        CREATE TABLE metrics (
            id INTEGER PRIMARY KEY,
            model_id INTEGER NOT NULL REFERENCES models(id),
            image_id INTEGER REFERENCES images(id),  -- NULL for a model-level metric
            suite TEXT NOT NULL DEFAULT '',
            subset TEXT NOT NULL DEFAULT '',
            name TEXT NOT NULL,
            value REAL,
            scorer TEXT NOT NULL,
            scorer_version TEXT NOT NULL DEFAULT '',
            details TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )"""
    )
    db.execute(
        "CREATE UNIQUE INDEX metrics_key ON metrics (model_id, ifnull(image_id, 0), suite, subset, name, scorer)"
    )


def _judges_schema(db: Database) -> None:
    """Judge tables (:mod:`judges`): the request cache and the judgments.

    - ``judge_requests``: one row per answered API request, keyed by the SHA-256 of (endpoint, model, prompt text,
      image hashes, parameters), so a re-run never pays twice; token usage and estimated cost. Never a key.
    - ``judgments``: one row per judged subject (a battle, an image and a description, ...), including failed ones
      with the reason; ``verdict`` is the parsed result, ``raw`` the raw replies / verdicts (JSON).
    """
    db.execute(
        """
        CREATE TABLE judge_requests (
            key TEXT PRIMARY KEY,                    -- SHA-256 of endpoint, model, prompt text, image hashes,
                                                     -- parameters
            endpoint TEXT NOT NULL,
            model TEXT NOT NULL,
            request TEXT NOT NULL,                   -- JSON: messages with images as SHA-256 (no image data)
            reply TEXT NOT NULL DEFAULT '',          -- the assistant message
            refusal TEXT NOT NULL DEFAULT '',
            finish_reason TEXT NOT NULL DEFAULT '',
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            total_tokens INTEGER,
            cost_usd REAL,                           -- estimated from the token counts and the judge prices
            latency_s REAL,
            attempts INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )"""
    )
    db.execute(
        """
        CREATE TABLE judgments (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL,                     -- judge name and model, e.g. gpt-judge:gpt-4o-mini
            task TEXT NOT NULL,                      -- pairwise | commonsense_fit | semvar_score | saneval | ...
            subject TEXT NOT NULL,                   -- what was judged; one judgment per judge, task and subject
            status TEXT NOT NULL CHECK (status IN ('ok', 'inconsistent', 'failed')),
            reason TEXT NOT NULL DEFAULT '',         -- why it failed (or was inconsistent)
            verdict TEXT NOT NULL DEFAULT '{}',      -- JSON: the parsed result
            raw TEXT NOT NULL DEFAULT '[]',          -- JSON: raw replies / verdicts
            explanation TEXT NOT NULL DEFAULT '',
            request_keys TEXT NOT NULL DEFAULT '[]', -- JSON: judge_requests keys
            prompt_id INTEGER REFERENCES prompts(id),
            image_id INTEGER REFERENCES images(id),
            model_id INTEGER REFERENCES models(id),
            battle_id TEXT REFERENCES battles(id),   -- the judge's own battle (pairwise)
            source_battle_id TEXT REFERENCES battles(id),  -- the human battle it repeats, if any
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (judge, task, subject)
        )"""
    )
    db.execute("CREATE INDEX judgments_battle ON judgments (battle_id)")
    db.execute("CREATE INDEX judgments_source_battle ON judgments (source_battle_id)")


def _study_scale(db: Database) -> None:
    """What the leaderboard reads at a million votes without a join per vote, and how it knows what changed.

    - ``votes`` also records what its battle showed: ``prompt_id``, ``left_image_id``/``right_image_id``,
      ``left_model_id``/``right_model_id``, the ``strategy`` that drew it and when it was ``served_at``, copied from
      the battle when the vote is recorded (battles never change once served). The leaderboard, the sampler and the
      exports read the votes table alone: following each vote's text battle id into ``battles`` cost 3 s per million
      votes, the rest of the leaderboard 0.5 s. Older rows are filled here.
    - ``data_versions``: one counter per kind of data, raised by triggers on every insert, update and delete
      (``votes``; ``metrics``; ``catalog`` for models, prompts and images). A leaderboard snapshot records the
      counters it was computed at; equal counters mean nothing it shows has changed.
    - ``leaderboard_snapshots``: the latest computed leaderboard per set of filters, as JSON, so every viewer (the web
      tab, its API, the command line) gets one at once (:mod:`arena.leaderboard.service`).
    """
    for column in ("prompt_id INTEGER REFERENCES prompts(id)", "left_image_id INTEGER REFERENCES images(id)",
                   "right_image_id INTEGER REFERENCES images(id)", "left_model_id INTEGER REFERENCES models(id)",
                   "right_model_id INTEGER REFERENCES models(id)", "strategy TEXT", "served_at REAL"):
        db.execute(f"ALTER TABLE votes ADD COLUMN {column}")
    db.execute(
        """
        UPDATE votes SET prompt_id = b.prompt_id, left_image_id = b.left_image_id, right_image_id = b.right_image_id,
               left_model_id = l.model_id, right_model_id = r.model_id, strategy = b.strategy,
               served_at = b.served_at
        FROM battles b JOIN images l ON l.id = b.left_image_id JOIN images r ON r.id = b.right_image_id
        WHERE b.id = votes.battle_id"""
    )
    db.execute("CREATE TABLE data_versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0)")
    db.execute("INSERT INTO data_versions (name) VALUES ('votes'), ('metrics'), ('catalog')")
    for table, counter in (("votes", "votes"), ("metrics", "metrics"), ("models", "catalog"), ("prompts", "catalog"),
                           ("images", "catalog")):
        for event in ("INSERT", "UPDATE", "DELETE"):
            db.execute(
                f"CREATE TRIGGER {table}_{event.lower()}_version AFTER {event} ON {table} "
                f"BEGIN UPDATE data_versions SET version = version + 1 WHERE name = '{counter}'; END"
            )
    db.execute(
        """
        CREATE TABLE leaderboard_snapshots (
            filters TEXT PRIMARY KEY,                -- JSON: the leaderboard options
            data_version TEXT NOT NULL,              -- JSON: data_versions when it was computed
            computed_at REAL NOT NULL,               -- unix time
            seconds REAL NOT NULL,                   -- how long it took
            view TEXT NOT NULL                       -- JSON: tables, figures and text as shown
        )"""
    )


def _metric_directions(db: Database) -> None:
    """``metric_directions``: per stored metric name, whether a ``higher`` or ``lower`` value is better (or ``none``),
    recorded by whoever computes the metric from its declaration (:mod:`judges.metrics.registry`); the leaderboard
    flips the sign of lower-is-better columns in its correlations with the ELO. Changes count as ``metrics`` changes
    (``data_versions``). Filled here with the names the code knew as lower-is-better before directions were
    recorded, for the rows already stored: ``fid`` and the consistency spreads."""
    db.execute(
        """
        CREATE TABLE metric_directions (
            name TEXT PRIMARY KEY,                   -- a stored metric name (metrics.name)
            direction TEXT NOT NULL CHECK (direction IN ('higher', 'lower', 'none'))
        )"""
    )
    db.execute("INSERT INTO metric_directions (name, direction) VALUES ('fid', 'lower'), ('consistency_std', 'lower'), "
               "('consistency_std_S_a', 'lower'), ('consistency_std_S_r', 'lower')")
    for event in ("INSERT", "UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER metric_directions_{event.lower()}_version AFTER {event} ON metric_directions "
            "BEGIN UPDATE data_versions SET version = version + 1 WHERE name = 'metrics'; END"
        )


def _annotator_identity(db: Database) -> None:
    """One person, one name (:mod:`datamodel.annotators`): ``annotators`` gains ``name_key``, the name normalised
    (NFKC, case-folded, spaces collapsed; unique) that sign-in looks names up by, and ``name_skeleton`` /
    ``key_skeleton``, the Unicode TR39 confusable skeletons of the name and of its key, which a new name must not share
    with an existing one. ``source`` gains a third value, ``retired``: a configured account the configuration no
    longer lists. Filled here for the accounts already stored, oldest first; where two normalise to one key (say
    "alice" and "Alice") the older keeps it and the younger keeps ``name_key`` empty, signing in under its exact
    name only, with its votes."""
    from datamodel.annotators import fill_name_keys

    for column in ("name_key TEXT", "name_skeleton TEXT", "key_skeleton TEXT"):
        db.execute(f"ALTER TABLE annotators ADD COLUMN {column}")
    db.execute("CREATE UNIQUE INDEX annotators_name_key ON annotators (name_key)")
    db.execute("CREATE INDEX annotators_name_skeleton ON annotators (name_skeleton)")
    db.execute("CREATE INDEX annotators_key_skeleton ON annotators (key_skeleton)")
    fill_name_keys(db)


def _votes_by_annotator_prompt(db: Database) -> None:
    """``votes_annotator_prompt``: each annotator's votes by prompt, with their ids (a covering index), so a server
    reads which prompts an annotator has already seen revealed at their first draw
    (:class:`sampling.prompt_pool.SeenPrompts`) from the index alone: 0.2 ms for 300 votes and 2 ms for 3,000 at a
    million votes, where the ``votes_annotator`` index needs a row lookup per vote (2 ms and 10 to 50 ms). That older
    index stays: its rowid order is what finds an annotator's newest votes at each later draw in one seek."""
    db.execute("CREATE INDEX votes_annotator_prompt ON votes (annotator_id, prompt_id)")


def _expected_shown(db: Database) -> None:
    """``votes.expected_shown``: whether the page showed the prompt's expected outcome when the vote was cast (1 or
    0; NULL for judges' votes and for votes cast before this column)."""
    db.execute("ALTER TABLE votes ADD COLUMN expected_shown INTEGER")


def _datasette_views(db: Database) -> None:
    """Views and full-text search for Datasette and other SQL readers (docs/deploying.md, "Browsing with Datasette").

    - ``vote_details``: one row per vote with who won and lost by name (NULL for a tie or both-bad), the prompt and
      its suite fields, the voter and voter kind, and the times (ISO 8601 UTC).
    - ``model_summary``: per model, the counted votes (excluded ones left out), wins, losses, ties, both-bad and the
      win rate (ties count half), split by human and judge votes.
    - ``prompts_fts``: an FTS5 index of ``prompts.text`` (external content, kept up to date by the triggers
      ``prompts_ai``/``prompts_ad``/``prompts_au``: the layout of sqlite-utils' ``enable_fts(create_triggers=True)``,
      which its ``search()`` and Datasette's ``?_search=`` recognise). Written as plain statements because
      ``enable_fts`` runs an ``executescript``, whose implicit COMMIT would split this migration's transaction.
    """
    db.execute("""
        CREATE VIEW vote_details AS
        SELECT v.id AS vote_id, v.created_at AS voted_at, strftime('%Y-%m-%dT%H:%M:%fZ', v.served_at, 'unixepoch')
                   AS served_at, v.seconds_to_vote, v.voter, v.voter_kind, v.outcome,
               CASE v.outcome WHEN 'A' THEN ml.name WHEN 'B' THEN mr.name END AS winner,
               CASE v.outcome WHEN 'A' THEN mr.name WHEN 'B' THEN ml.name END AS loser,
               ml.name AS model_a, mr.name AS model_b, p.suite, p.subset, p.variant, p.item_key, p.text AS prompt,
               v.prompt_id, v.left_image_id AS image_a_id, v.right_image_id AS image_b_id, v.strategy,
               v.excluded, v.excluded_reason
        FROM votes v JOIN prompts p ON p.id = v.prompt_id
        JOIN models ml ON ml.id = v.left_model_id JOIN models mr ON mr.id = v.right_model_id""")
    db.execute("""
        CREATE VIEW model_summary AS
        WITH sides AS (
            SELECT left_model_id AS model_id, voter_kind, CASE outcome WHEN 'A' THEN 'win' WHEN 'B' THEN 'loss'
                   ELSE outcome END AS result FROM votes WHERE NOT excluded
            UNION ALL
            SELECT right_model_id, voter_kind, CASE outcome WHEN 'B' THEN 'win' WHEN 'A' THEN 'loss'
                   ELSE outcome END FROM votes WHERE NOT excluded)
        SELECT m.name AS model, count(s.result) AS votes, count(s.result = 'win' OR NULL) AS wins,
               count(s.result = 'loss' OR NULL) AS losses, count(s.result = 'tie' OR NULL) AS ties,
               count(s.result = 'both_bad' OR NULL) AS both_bad,
               round((count(s.result = 'win' OR NULL) + 0.5 * count(s.result IN ('tie', 'both_bad') OR NULL))
                     / nullif(count(s.result), 0), 4) AS win_rate,
               count(s.voter_kind = 'human' OR NULL) AS human_votes,
               count(s.voter_kind = 'judge' OR NULL) AS judge_votes
        FROM models m LEFT JOIN sides s ON s.model_id = m.id
        GROUP BY m.id ORDER BY win_rate DESC, m.name""")
    db.execute("CREATE VIRTUAL TABLE [prompts_fts] USING FTS5 ([text], content=[prompts], content_rowid=[id])")
    db.execute("INSERT INTO [prompts_fts] (rowid, [text]) SELECT [id], [text] FROM [prompts]")
    db.execute("CREATE TRIGGER [prompts_ai] AFTER INSERT ON [prompts] BEGIN "
               "INSERT INTO [prompts_fts] (rowid, [text]) VALUES (new.[id], new.[text]); END")
    db.execute("CREATE TRIGGER [prompts_ad] AFTER DELETE ON [prompts] BEGIN "
               "INSERT INTO [prompts_fts] ([prompts_fts], rowid, [text]) VALUES ('delete', old.[id], old.[text]); END")
    db.execute("CREATE TRIGGER [prompts_au] AFTER UPDATE ON [prompts] BEGIN "
               "INSERT INTO [prompts_fts] ([prompts_fts], rowid, [text]) VALUES ('delete', old.[id], old.[text]); "
               "INSERT INTO [prompts_fts] (rowid, [text]) VALUES (new.[id], new.[text]); END")



def _annotator_sessions(db: Database) -> None:
    """``annotator_sessions``: the arena page's staying signed in across reloads. The page keeps a random token in
    the browser's local storage; the server stores only its SHA-256 (``token_hash``), the annotator, the page's
    session id (so a reload finds the battle on screen), when it expires and when it was revoked (signing out)."""
    db.execute(
        """
        CREATE TABLE annotator_sessions (
            token_hash TEXT PRIMARY KEY,
            annotator_id INTEGER NOT NULL REFERENCES annotators(id),
            session_id TEXT NOT NULL,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            revoked_at REAL
        )"""
    )
    db.execute("CREATE INDEX annotator_sessions_annotator ON annotator_sessions (annotator_id)")


def _judgment_template_version(db: Database) -> None:
    """``judgments.template_version``: the version of the prompt template a judgment was asked with
    (:meth:`judges.prompts.JudgeTemplate.version`, a short hash of its text; the pairwise judge's voter name carries
    it too). Empty for judgments made before this column, and for tasks that keep their version elsewhere."""
    db.execute("ALTER TABLE judgments ADD COLUMN template_version TEXT NOT NULL DEFAULT ''")


def _guidelines_seen(db: Database) -> None:
    """``annotators.guidelines_seen_at``: when the arena page first showed the annotator its guidelines (open, on the
    first visit; folded on every later one: :func:`datamodel.annotators.first_guidelines_visit`). Annotators who
    voted before this column have seen them already."""
    db.execute("ALTER TABLE annotators ADD COLUMN guidelines_seen_at REAL")
    db.execute("UPDATE annotators SET guidelines_seen_at = CAST(strftime('%s', 'now') AS REAL) "
               "WHERE id IN (SELECT annotator_id FROM votes WHERE annotator_id IS NOT NULL)")


def _imported_votes(db: Database) -> None:
    """Votes brought from elsewhere (``python -m arena import-votes``: a FastChat-style battle log, the taxonomy
    paper's labelled battles, a generic CSV), kept apart from the arena's own ``votes``: they have no battle, often
    no prompt and never images, so no page that shows images can reach them; the leaderboard reads both.

    - ``vote_imports``: one row per imported file: the ``source`` its votes are filed under (what the leaderboard's
      source filter names), the ``format``, the ``file`` as given, its ``sha256``, the records read, the votes
      ``added`` (the others were there already), the alias mapping used (JSON) and when.
    - ``imported_votes``: one row per vote: its import, ``source`` and ``original_id`` (the record's own id in its
      file, unique per source: a second import of the file adds nothing), ``battle_key`` (votes on one battle share
      it, e.g. a human and a judge label of one taxonomy battle; ``battle_hash``, a 64-bit BLAKE2b of the source and
      the battle key, is what the leaderboard reads), the two models as displayed and the ``outcome``
      relative to them, ``voter`` / ``voter_kind``, ``voted_at`` (unix time; NULL when the file has none),
      ``anonymous`` (1 when the voter did not see the model names, FastChat's ``anony``; NULL unknown), the suite
      prompt it is joined to if any (``prompt_id``) and the ``suite`` / ``subset`` / ``variant`` / ``prompt`` text the
      record gave, and ``record``: the record's other fields as JSON.
    - A change to ``imported_votes`` raises the ``votes`` data version (the import raises it once per file; updates
      and deletes by triggers), so leaderboard snapshots know.
    """
    db.execute(
        """
        CREATE TABLE vote_imports (
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            format TEXT NOT NULL,                    -- fastchat | taxonomy | csv
            file TEXT NOT NULL,                      -- the file name as given
            sha256 TEXT NOT NULL,                    -- of the file's bytes
            records INTEGER NOT NULL,                -- records read
            added INTEGER NOT NULL,                  -- votes added (the others were imported before)
            aliases TEXT NOT NULL DEFAULT '{}',      -- JSON: {name in the file: arena model}
            imported_at REAL NOT NULL                -- unix time
        )"""
    )
    db.execute(
        """
        CREATE TABLE imported_votes (
            id INTEGER PRIMARY KEY,
            import_id INTEGER NOT NULL REFERENCES vote_imports(id),
            source TEXT NOT NULL,
            original_id TEXT NOT NULL,               -- the record's id in its file
            battle_key TEXT NOT NULL,                -- votes on one battle share it
            battle_hash INTEGER NOT NULL,            -- 64-bit BLAKE2b of source and battle key (read fast)
            left_model_id INTEGER NOT NULL REFERENCES models(id),   -- shown as A
            right_model_id INTEGER NOT NULL REFERENCES models(id),  -- shown as B
            outcome TEXT NOT NULL CHECK (outcome IN ('A', 'B', 'tie', 'both_bad')),
            voter TEXT NOT NULL DEFAULT '',
            voter_kind TEXT NOT NULL CHECK (voter_kind IN ('human', 'judge')),
            voted_at REAL,                           -- unix time; NULL: the file has none
            anonymous INTEGER,                       -- 1: model names hidden until the vote; NULL: unknown
            prompt_id INTEGER REFERENCES prompts(id),
            suite TEXT NOT NULL DEFAULT '',
            subset TEXT NOT NULL DEFAULT '',
            variant TEXT NOT NULL DEFAULT '',
            prompt TEXT NOT NULL DEFAULT '',
            record TEXT NOT NULL DEFAULT '{}',       -- JSON: the record's other fields
            CHECK (left_model_id != right_model_id),
            UNIQUE (source, original_id)
        )"""
    )
    db.execute("CREATE INDEX imported_votes_import ON imported_votes (import_id)")
    for event in ("UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER imported_votes_{event.lower()}_version AFTER {event} ON imported_votes "
            "BEGIN UPDATE data_versions SET version = version + 1 WHERE name = 'votes'; END"
        )
def _image_requests(db: Database) -> None:
    """``image_requests``: one row per image an image API (an OpenAI-compatible ``/images/generations``, DALL-E 3)
    answered, keyed by the SHA-256 of (endpoint, request body, generation seed), written as soon as the image is in
    the media folder, so a run restarted after a crash or an interruption never pays for an image twice
    (:mod:`datamodel.image_requests`). The prompt the API actually drew (DALL-E 3 rewrites prompts) is kept in
    ``revised_prompt``. Never an API key."""
    db.execute(
        """
        CREATE TABLE image_requests (
            key TEXT PRIMARY KEY,                    -- SHA-256 of endpoint, request body, generation seed
            endpoint TEXT NOT NULL,
            model TEXT NOT NULL,                     -- the API's model id, e.g. dall-e-3
            request TEXT NOT NULL,                   -- JSON: the request body
            media_hash TEXT NOT NULL,                -- the image in the media folder
            media_ext TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            revised_prompt TEXT NOT NULL DEFAULT '', -- the prompt the API drew, when it says
            usage TEXT NOT NULL DEFAULT '{}',        -- JSON: the token usage, when the API reports it
            cost_usd REAL,                           -- the model's price per image (or from its token usage)
            latency_s REAL,
            attempts INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )"""
    )
def _metric_variant(db: Database) -> None:
    """``metrics.variant``: the prompt variant a metric row covers (``with_definition`` / ``without_definition`` for
    the taxonomy suite; empty for rows over every variant, as all rows before this column are), part of the
    ``metrics_key`` unique index, so a model-level FID of one subset and variant is its own row beside the pooled
    one. Existing rows keep their values and keys."""
    db.execute("ALTER TABLE metrics ADD COLUMN variant TEXT NOT NULL DEFAULT ''")
    db.execute("DROP INDEX metrics_key")
    db.execute("CREATE UNIQUE INDEX metrics_key ON metrics "
               "(model_id, ifnull(image_id, 0), suite, subset, variant, name, scorer)")


def _human_ratings(db: Database) -> None:
    """Human rating tasks beside the battles (:mod:`datamodel.human_ratings`; tasks declared in
    :mod:`judges.rating_tasks`): one image, one question, one answer on the task's scale.

    - ``rating_assignments``: what an admin opened for rating: per task, how many raters each item gets
      (``raters_per_item``: the papers use two experts or three raters), which models' images (``models``, JSON list
      of names; empty: all) and whether it is open (``active``).
    - ``rating_servings``: a question served to an annotator's session, like a battle: an unguessable ``id``, the
      ``task``, the ``unit`` (the questions one rater answers together: a Commonsense-T2I generation pair, a
      SemVarBench item of one model, a SANEval image), the ``subject`` (the question, named as the judges name theirs
      in ``judgments.subject``), the image, the prompt whose text or description is asked about
      (``text_prompt_id``) and the words shown (``shown_text``), the ``media_token`` the page loads the image by, when
      it was served and when it was skipped.
    - ``ratings``: at most one per serving and one per (task, subject, annotator): the rater, the ``answer`` (JSON on
      the task's scale) and its ``value`` on [0, 1], what was shown (copied from the serving, with the image's prompt
      and model), the seconds taken and when; ``excluded`` / ``excluded_reason`` / ``reviewed`` as for votes.
    - ``rating_details``: a view with one row per rating, names instead of ids, for Datasette and SQL readers.
    """
    db.execute(
        """
        CREATE TABLE rating_assignments (
            task TEXT PRIMARY KEY,
            raters_per_item INTEGER NOT NULL DEFAULT 1 CHECK (raters_per_item BETWEEN 1 AND 10),
            models TEXT NOT NULL DEFAULT '[]',       -- JSON: model names whose images are rated; []: all
            active INTEGER NOT NULL DEFAULT 1,
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )"""
    )
    db.execute(
        """
        CREATE TABLE rating_servings (
            id TEXT PRIMARY KEY,                     -- unguessable token
            task TEXT NOT NULL,
            unit TEXT NOT NULL,
            subject TEXT NOT NULL,
            image_id INTEGER NOT NULL REFERENCES images(id),
            text_prompt_id INTEGER NOT NULL REFERENCES prompts(id),
            shown_text TEXT NOT NULL DEFAULT '',
            annotator_id INTEGER NOT NULL REFERENCES annotators(id),
            session_id TEXT NOT NULL,
            media_token TEXT NOT NULL UNIQUE,        -- unguessable; the page loads the image through it
            served_at REAL NOT NULL,
            skipped_at REAL
        )"""
    )
    db.execute("CREATE INDEX rating_servings_annotator ON rating_servings (annotator_id, task, unit)")
    db.execute(
        """
        CREATE TABLE ratings (
            id INTEGER PRIMARY KEY,
            serving_id TEXT NOT NULL UNIQUE REFERENCES rating_servings(id),
            task TEXT NOT NULL,
            unit TEXT NOT NULL,
            subject TEXT NOT NULL,
            rater TEXT NOT NULL,                     -- the annotator's name
            annotator_id INTEGER NOT NULL REFERENCES annotators(id),
            answer TEXT NOT NULL,                    -- JSON on the task's scale
            value REAL NOT NULL,                     -- the answer on [0, 1]
            image_id INTEGER NOT NULL REFERENCES images(id),
            prompt_id INTEGER NOT NULL REFERENCES prompts(id),       -- the image's prompt
            text_prompt_id INTEGER NOT NULL REFERENCES prompts(id),  -- the prompt asked about
            model_id INTEGER NOT NULL REFERENCES models(id),
            shown_text TEXT NOT NULL DEFAULT '',
            seconds_to_answer REAL,
            served_at REAL NOT NULL,
            answered_at REAL NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            excluded INTEGER NOT NULL DEFAULT 0,
            excluded_reason TEXT NOT NULL DEFAULT '',
            reviewed INTEGER NOT NULL DEFAULT 0,
            UNIQUE (task, subject, annotator_id)
        )"""
    )
    db.execute("CREATE INDEX ratings_unit ON ratings (task, unit)")
    db.execute("CREATE INDEX ratings_annotator ON ratings (annotator_id, answered_at)")
    db.execute("""
        CREATE VIEW rating_details AS
        SELECT r.id AS rating_id, r.created_at AS answered_at,
               strftime('%Y-%m-%dT%H:%M:%fZ', r.served_at, 'unixepoch') AS served_at, r.seconds_to_answer, r.rater,
               r.task, p.suite, p.subset, p.item_key, r.unit, r.subject, m.name AS model, r.image_id,
               p.text AS prompt, r.shown_text, r.answer, r.value, r.excluded, r.excluded_reason
        FROM ratings r JOIN prompts p ON p.id = r.prompt_id JOIN models m ON m.id = r.model_id""")


def _vote_details_without_names(db: Database) -> None:
    """``vote_details`` numbers annotators instead of naming them: ``voter`` is a judge's name, or ``annotator <id>``
    for a person (the view is public in Datasette; annotators' names are theirs and the admin's). Otherwise as
    :func:`_datasette_views` made it."""
    served_at = unixepoch_text(db, "v.served_at")
    db.execute("DROP VIEW vote_details")
    db.execute(f"""
        CREATE VIEW vote_details AS
        SELECT v.id AS vote_id, v.created_at AS voted_at, {served_at}
                   AS served_at, v.seconds_to_vote,
               CASE v.voter_kind WHEN 'judge' THEN v.voter ELSE 'annotator ' || v.annotator_id END AS voter,
               v.voter_kind, v.outcome,
               CASE v.outcome WHEN 'A' THEN ml.name WHEN 'B' THEN mr.name END AS winner,
               CASE v.outcome WHEN 'A' THEN mr.name WHEN 'B' THEN ml.name END AS loser,
               ml.name AS model_a, mr.name AS model_b, p.suite, p.subset, p.variant, p.item_key, p.text AS prompt,
               v.prompt_id, v.left_image_id AS image_a_id, v.right_image_id AS image_b_id, v.strategy,
               v.excluded, v.excluded_reason
        FROM votes v JOIN prompts p ON p.id = v.prompt_id
        JOIN models ml ON ml.id = v.left_model_id JOIN models mr ON mr.id = v.right_model_id""")


def _shown_images(db: Database) -> None:
    """Which images battles may draw (:mod:`datamodel.renditions`): only those rendered for the display settings the
    arena serves, not withheld by the admin's policy.

    - ``images.rendition``: the key of the display rendition made of the image (its settings: size, fit, format,
      quality, padding, version); NULL until one is made. ``images.unshowable``: why none could be made (an original
      that cannot be read), NULL otherwise.
    - ``images.published_at``: when the image was exported with its model's name (the Hugging Face export); anyone
      holding that export can render it as the arena does and name it in a battle. ``images.withheld``: why battles
      leave the image out (``published``), NULL while it may be drawn.
    - ``display``: one row, the rendition key battles are drawn for: written by the server at start (its settings)
      and by the first process that renders images into an arena without one. A change counts as a ``catalog``
      change (``data_versions``).
    - ``battle_images``: the images a battle may show (rendered for ``display``, not withheld); every draw reads it.
      Images stored before this migration have no rendition recorded: the server's start records or makes them.
    """
    real = pick(db, sqlite="REAL", postgresql="double precision")
    for column in ("rendition TEXT", "unshowable TEXT", f"published_at {real}", "withheld TEXT"):
        db.execute(f"ALTER TABLE images ADD COLUMN {column}")
    db.execute("CREATE TABLE display (id INTEGER PRIMARY KEY CHECK (id = 1), rendition TEXT NOT NULL, "
               f"set_at {real} NOT NULL)")
    for event in ("INSERT", "UPDATE", "DELETE"):
        if is_postgres(db):
            from datamodel.schema_postgresql import version_trigger_sql

            db.execute(version_trigger_sql("display", "catalog", event))
        else:
            db.execute(f"CREATE TRIGGER display_{event.lower()}_version AFTER {event} ON display "
                       "BEGIN UPDATE data_versions SET version = version + 1 WHERE name = 'catalog'; END")
    db.execute("""
        CREATE VIEW battle_images AS
        SELECT id, prompt_id, model_id, idx FROM images
        WHERE withheld IS NULL AND rendition = (SELECT rendition FROM display WHERE id = 1)""")


def _signing_out(db: Database) -> None:
    """``annotators.signed_out_at``: when the annotator last signed out, or had their token changed by the
    configuration. A session that began before it ends at its next request, and a stay-signed-in token issued before
    it no longer signs anyone in (:func:`arena.session.check_signed_in`)."""
    column_type = pick(db, sqlite="REAL", postgresql="double precision")
    db.execute(f"ALTER TABLE annotators ADD COLUMN signed_out_at {column_type}")

def _rating_details_without_names(db: Database) -> None:
    """``rating_details`` numbers raters instead of naming them (``rater``: ``annotator <id>``), as ``vote_details``
    does (:func:`_vote_details_without_names`): the view is public in Datasette. Otherwise as :func:`_human_ratings`
    made it."""
    served_at = unixepoch_text(db, "r.served_at")
    db.execute("DROP VIEW rating_details")
    db.execute(f"""
        CREATE VIEW rating_details AS
        SELECT r.id AS rating_id, r.created_at AS answered_at,
               {served_at} AS served_at, r.seconds_to_answer,
               'annotator ' || r.annotator_id AS rater, r.task, p.suite, p.subset, p.item_key, r.unit, r.subject,
               m.name AS model, r.image_id, p.text AS prompt, r.shown_text, r.answer, r.value, r.excluded,
               r.excluded_reason
        FROM ratings r JOIN prompts p ON p.id = r.prompt_id JOIN models m ON m.id = r.model_id""")

def _admin_actions(db: Database) -> None:
    """``admin_actions``: the log of an admin's reviews of human votes (:mod:`datamodel.reviews`), one row per action:
    when, exclude or include, whose votes (an annotator's name, or ''), which quality rule's (or ''), or which one vote,
    the admin's reason, and how many votes it covered and changed. The votes themselves keep the reason too."""
    identity = pick(db, sqlite="INTEGER PRIMARY KEY", postgresql="bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    real = pick(db, sqlite="REAL", postgresql="double precision")
    db.execute(
        f"""
        CREATE TABLE admin_actions (
            id {identity},
            acted_at {real} NOT NULL,                  -- unix time
            action TEXT NOT NULL CHECK (action IN ('exclude', 'include')),
            annotator TEXT NOT NULL DEFAULT '',
            rule TEXT NOT NULL DEFAULT '',
            vote_id INTEGER,
            reason TEXT NOT NULL,
            votes INTEGER NOT NULL,                  -- votes the action covered
            changed INTEGER NOT NULL                 -- of which the flag changed
        )"""
    )


def _leaderboard_history(db: Database) -> None:
    """``leaderboard_history``: the leaderboard by date, one row per set of filters and day (the last one computed
    that day, :mod:`datamodel.rating_history`): the ratings, intervals and votes of every model as JSON. Kept for
    ``leaderboard_history_days`` days; the board as of a date and the rating-history chart read it."""
    real = pick(db, sqlite="REAL", postgresql="double precision")
    db.execute(
        f"""
        CREATE TABLE leaderboard_history (
            filters TEXT NOT NULL,                   -- JSON: the leaderboard options (as leaderboard_snapshots)
            day TEXT NOT NULL,                       -- YYYY-MM-DD (UTC)
            computed_at {real} NOT NULL,               -- unix time of the board kept for that day
            board TEXT NOT NULL,                     -- JSON: arena.leaderboard.view.leaderboard_json
            PRIMARY KEY (filters, day)
        )"""
    )


_VOTE_FACT_COLUMNS = ("voter_kind", "annotator_id", "prompt_id", "left_image_id", "right_image_id", "left_model_id",
                      "right_model_id", "outcome")


def _vote_changes(db: Database) -> None:
    """``vote_changes``: every change to which votes count, in commit order, so that each app process keeps its
    sampler's counts exact with the votes of the others (:meth:`sampling.sampler.SamplingStats.catch_up`, reading
    :func:`datamodel.sampling_reads.vote_changes_since`).

    One row (``seq``, ascending) per vote that starts counting (+1: inserted not excluded, or included again) or stops
    (−1: excluded, or deleted), with the vote's id and the facts a count needs (voter kind, annotator, prompt, the two
    images and models as displayed, outcome), written by triggers on ``votes``. ``seq`` follows the commits, so a
    reader that has every row up to ``seq`` has every change committed before it: SQLite has one writer at a time;
    PostgreSQL's triggers run at the commit, after locking the ``votes`` row of ``data_versions``, which the commit
    releases. Votes already stored count from the next full read of the counts."""
    facts = ", ".join(_VOTE_FACT_COLUMNS)

    def insert(which: str, sign: str) -> str:
        values = ", ".join(f"{which}.{column}" for column in _VOTE_FACT_COLUMNS)
        return f"INSERT INTO vote_changes (vote_id, sign, {facts}) VALUES ({which}.id, {sign}, {values});"

    if is_postgres(db):
        db.execute("CREATE TABLE vote_changes (seq bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                   "vote_id bigint NOT NULL, sign integer NOT NULL, voter_kind text NOT NULL, annotator_id bigint, "
                   "prompt_id bigint, left_image_id bigint, right_image_id bigint, left_model_id bigint, "
                   "right_model_id bigint, outcome text NOT NULL)")
    else:
        db.execute("CREATE TABLE vote_changes (seq INTEGER PRIMARY KEY, vote_id INTEGER NOT NULL, "
                   "sign INTEGER NOT NULL, voter_kind TEXT NOT NULL, annotator_id INTEGER, prompt_id INTEGER, "
                   "left_image_id INTEGER, right_image_id INTEGER, left_model_id INTEGER, right_model_id INTEGER, "
                   "outcome TEXT NOT NULL)")
    _log_changes(db, "votes", "arena_log_vote_change", insert)


def _log_changes(db: Database, table: str, function: str, insert: Callable[[str, str], str], *,
                 replace: bool = False) -> None:
    """The triggers on ``table`` (with an ``excluded`` column) that log each row that starts counting (+1: inserted
    not excluded, or included again) or stops (−1: excluded, or deleted), by the statement ``insert(row, sign)``
    (``row`` NEW or OLD). On PostgreSQL they run at the commit (deferred, through the plpgsql ``function``), after
    locking the ``votes`` row of ``data_versions``, so the log's ``seq`` follows the commits (:func:`_vote_changes`).
    ``replace``: the triggers exist; write them again with this ``insert`` (PostgreSQL: the function alone)."""
    # (event, when, row, sign): a row inserted counted, its excluded flag flipped, a counted row deleted
    changes = (("INSERT", "NEW.excluded = 0", "NEW", "1"),
               ("UPDATE", "(OLD.excluded = 0) != (NEW.excluded = 0)", "NEW",
                "CASE WHEN NEW.excluded = 0 THEN 1 ELSE -1 END"),
               ("DELETE", "OLD.excluded = 0", "OLD", "-1"))
    if is_postgres(db):
        branches = " ELSIF ".join(f"TG_OP = '{event}' AND {when} THEN {insert(which, sign)}"
                                  for event, when, which, sign in changes)
        db.execute(f"CREATE {'OR REPLACE ' if replace else ''}FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql "
                   "AS $$ BEGIN PERFORM 1 FROM data_versions WHERE name = 'votes' FOR UPDATE; "
                   f"IF {branches} END IF; RETURN NULL; END $$")
        for event, *_ in changes if not replace else ():
            db.execute(f"CREATE CONSTRAINT TRIGGER {table}_{event.lower()}_change AFTER {event} ON {table} "
                       f"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {function}()")
        return
    for event, when, which, sign in changes:
        on = "UPDATE OF excluded" if event == "UPDATE" else event
        if replace:
            db.execute(f"DROP TRIGGER {table}_{event.lower()}_change")
        db.execute(f"CREATE TRIGGER {table}_{event.lower()}_change AFTER {on} ON {table} WHEN {when} "
                   f"BEGIN {insert(which, sign)} END")


def _snapshot_claims(db: Database) -> None:
    """``snapshot_claims``: which app process computes the leaderboard of a set of filters now, so that several
    replicas on one database compute each snapshot once, not once each (:class:`arena.leaderboard.service.
    SnapshotService`): the ``filters`` (as ``leaderboard_snapshots`` keys them), the claiming process (``holder``) and
    when its claim lapses (``expires_at``, unix time), after which another may take it (the holder died)."""
    db.execute("CREATE TABLE snapshot_claims (filters TEXT PRIMARY KEY, holder TEXT NOT NULL, "
               f"expires_at {pick(db, sqlite='REAL', postgresql='double precision')} NOT NULL)")


def _rate_events(db: Database) -> None:
    """``rate_events``: the requests the web app's rate limits count, when several app replicas share the database
    (:class:`arena.ratelimit.RateLimiter` over :func:`datamodel.limits.rate_hit`): one row per request counted, by
    limit (``scope``: votes per annotator, per address, battle loads ...) and ``key`` (the annotator, the address),
    at ``at`` (unix time); rows older than the limit's window are deleted as the key is counted again (and by a
    sweep). On PostgreSQL ``arena_rate_hit`` counts and records one request in one call."""
    real = pick(db, sqlite="REAL", postgresql="double precision")
    db.execute(f"CREATE TABLE rate_events (scope TEXT NOT NULL, key TEXT NOT NULL, at {real} NOT NULL)")
    db.execute("CREATE INDEX rate_events_key ON rate_events (scope, key, at)")
    if is_postgres(db):
        db.execute("""
            CREATE FUNCTION arena_rate_hit(p_scope text, p_key text, p_now double precision, p_window double precision,
                                           p_limit integer) RETURNS double precision LANGUAGE plpgsql AS $$
            DECLARE found integer; first double precision;
            BEGIN
                SET LOCAL synchronous_commit TO OFF;  -- a count lost in a crash costs nothing
                PERFORM pg_advisory_xact_lock(7303032, hashtext(p_scope || chr(31) || p_key));
                DELETE FROM rate_events WHERE scope = p_scope AND key = p_key AND at <= p_now - p_window;
                SELECT count(*), min(at) INTO found, first FROM rate_events WHERE scope = p_scope AND key = p_key;
                IF found >= p_limit THEN
                    RETURN first + p_window - p_now;
                END IF;
                INSERT INTO rate_events (scope, key, at) VALUES (p_scope, p_key, p_now);
                RETURN 0;
            END $$""")


def _shared_web_state(db: Database) -> None:
    """What the web app keeps of sign-in attempts and admin sessions when several app replicas share the database
    (:mod:`datamodel.limits`, :mod:`datamodel.admin_state`; one process serving a SQLite file keeps them in memory):

    - ``login_attempts``: each attempt at a secret (an annotator's token, the admin password) by ``throttle`` (which
      secret) and ``key`` (a client address, or ``*`` for all of them): when it began and ended and whether it
      failed; one not ended is in flight (and counts as one until it ends or grows stale, its replica having died).
    - ``admin_sessions``: a live admin session by the SHA-256 of its id, the client address and browser cookie that
      hold it, when it was opened and last used.
    - ``export_offers``: an export waiting for its one download, by the SHA-256 of its link's token: its session
      (hashed), holder, the file (on the replica that wrote it), its name and type, when it expires.
    """
    real = pick(db, sqlite="REAL", postgresql="double precision")
    identity = pick(db, sqlite="INTEGER PRIMARY KEY", postgresql="bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    db.execute(f"CREATE TABLE login_attempts (id {identity}, throttle TEXT NOT NULL, key TEXT NOT NULL, "
               f"started_at {real} NOT NULL, ended_at {real}, failed INTEGER NOT NULL DEFAULT 0)")
    db.execute("CREATE INDEX login_attempts_key ON login_attempts (throttle, key)")
    db.execute(f"CREATE TABLE admin_sessions (id_hash TEXT PRIMARY KEY, client TEXT NOT NULL, browser TEXT, "
               f"opened_at {real} NOT NULL, seen_at {real} NOT NULL)")
    db.execute(f"CREATE TABLE export_offers (token_hash TEXT PRIMARY KEY, session_hash TEXT NOT NULL, "
               f"client TEXT NOT NULL, browser TEXT, path TEXT NOT NULL, name TEXT NOT NULL, media_type TEXT NOT NULL, "
               f"expires_at {real} NOT NULL)")


def _open_prompts(db: Database) -> None:
    """``generations``: every image an open prompt asked a model for (:mod:`datamodel.open_prompts`), made or not:
    the prompt, the model, the image (NULL unless ``status`` is ``ok``), who asked, ``status`` (``ok``, ``failed``,
    ``timeout``, ``flagged`` by the safety filter), why not (``reason``), the model's own generation time
    (``seconds``), the time it waited in the serving layer's queue (``wait_seconds``), the API price where known
    (``cost_usd``), which serving path made it (``serving``: embedded or ray) and when it was asked
    (``requested_at``, unix time). The prompts are rows of the suite ``open``; their images are withheld from the
    stored battles (``images.withheld = 'open prompt'``)."""
    real = pick(db, sqlite="REAL", postgresql="double precision")
    identity = pick(db, sqlite="INTEGER PRIMARY KEY", postgresql="bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    db.execute(
        f"""
        CREATE TABLE generations (
            id {identity},
            prompt_id INTEGER NOT NULL REFERENCES prompts(id),
            model_id INTEGER NOT NULL REFERENCES models(id),
            image_id INTEGER REFERENCES images(id),
            annotator_id INTEGER REFERENCES annotators(id),
            status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout', 'flagged')),
            reason TEXT NOT NULL DEFAULT '',
            seconds {real},
            wait_seconds {real},
            cost_usd {real},
            serving TEXT NOT NULL DEFAULT '',
            requested_at {real} NOT NULL
        )"""
    )
    db.execute("CREATE INDEX generations_model ON generations (model_id, status)")
    db.execute("CREATE INDEX generations_prompt ON generations (prompt_id)")


IMPORTED_VOTE_COLUMNS = (
    "id", "import_id", "source", "original_id", "battle_key", "battle_hash", "left_model_id", "right_model_id",
    "outcome", "voter", "voter_kind", "voted_at", "anonymous", "prompt_id", "suite", "subset", "variant", "prompt",
    "record")


def _imported_vote_flags(db: Database) -> None:
    """Imported votes as the files hold them (:mod:`arena.vote_import`): ``imported_votes`` gains

    - ``flag``: why the record is anomalous ('' when it is not), e.g. ``self_battle`` (both sides the same model: a
      FastChat log keeps such a record, and FastChat's own fit counts it); the check that refused a self-battle goes.
      Each rating protocol treats a flagged vote as its source's code did; the arena's own leaves it out.
    - ``left_image_id`` / ``right_image_id``: the images the voter saw, when the file carried them (a GenAI-Bench or
      Pick-a-Pic file): imported into the images table, so the battle can be shown and judged, and the judges'
      votes on the same two images meet the imported human vote.

    SQLite cannot drop a check, so the table is copied into a new one; PostgreSQL alters it in place."""
    if is_postgres(db):
        for name, in db.execute("SELECT conname FROM pg_constraint WHERE conrelid = 'imported_votes'::regclass AND "
                                "contype = 'c' AND pg_get_constraintdef(oid) LIKE '%left_model_id <> right_model_id%'"):
            db.execute(f'ALTER TABLE imported_votes DROP CONSTRAINT "{name}"')
        db.execute("ALTER TABLE imported_votes ADD COLUMN flag text NOT NULL DEFAULT ''")
        db.execute("ALTER TABLE imported_votes ADD COLUMN left_image_id bigint REFERENCES images(id)")
        db.execute("ALTER TABLE imported_votes ADD COLUMN right_image_id bigint REFERENCES images(id)")
        return
    db.execute(
        """
        CREATE TABLE imported_votes_copy (
            id INTEGER PRIMARY KEY,
            import_id INTEGER NOT NULL REFERENCES vote_imports(id),
            source TEXT NOT NULL,
            original_id TEXT NOT NULL,               -- the record's id in its file
            battle_key TEXT NOT NULL,                -- votes on one battle share it
            battle_hash INTEGER NOT NULL,            -- 64-bit BLAKE2b of source and battle key (read fast)
            left_model_id INTEGER NOT NULL REFERENCES models(id),   -- shown as A
            right_model_id INTEGER NOT NULL REFERENCES models(id),  -- shown as B (the same model: a self-battle)
            outcome TEXT NOT NULL CHECK (outcome IN ('A', 'B', 'tie', 'both_bad')),
            voter TEXT NOT NULL DEFAULT '',
            voter_kind TEXT NOT NULL CHECK (voter_kind IN ('human', 'judge')),
            voted_at REAL,                           -- unix time; NULL: the file has none
            anonymous INTEGER,                       -- 1: model names hidden until the vote; NULL: unknown
            prompt_id INTEGER REFERENCES prompts(id),
            suite TEXT NOT NULL DEFAULT '',
            subset TEXT NOT NULL DEFAULT '',
            variant TEXT NOT NULL DEFAULT '',
            prompt TEXT NOT NULL DEFAULT '',
            record TEXT NOT NULL DEFAULT '{}',       -- JSON: the record's other fields
            flag TEXT NOT NULL DEFAULT '',           -- why the record is anomalous ('' : it is not), e.g. self_battle
            left_image_id INTEGER REFERENCES images(id),   -- the images shown, when the file carried them
            right_image_id INTEGER REFERENCES images(id),
            UNIQUE (source, original_id)
        )"""
    )
    columns = ", ".join(IMPORTED_VOTE_COLUMNS)
    db.execute(f"INSERT INTO imported_votes_copy ({columns}) SELECT {columns} FROM imported_votes ORDER BY id")
    db.execute("DROP TABLE imported_votes")
    db.execute("ALTER TABLE imported_votes_copy RENAME TO imported_votes")
    db.execute("CREATE INDEX imported_votes_import ON imported_votes (import_id)")
    for event in ("UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER imported_votes_{event.lower()}_version AFTER {event} ON imported_votes "
            "BEGIN UPDATE data_versions SET version = version + 1 WHERE name = 'votes'; END"
        )


def _prompt_candidates(db: Database) -> None:
    """``prompt_candidates``: prompts written by an LLM that wait for a person's check before they become prompts
    (:mod:`datamodel.prompt_candidates`; SANEval's §3.1: "generated using Gemini-2.5-Flash and subsequently validated
    by human annotators"). One row per candidate, by suite and item key: its subset, text, metadata and where it came
    from; its status (pending, accepted, rejected), who decided, why, and when (unix time). Accepting one writes the
    prompt (``prompts``) in the same transaction; a rejected one is kept, never deleted."""
    identity = pick(db, sqlite="INTEGER PRIMARY KEY", postgresql="bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    real = pick(db, sqlite="REAL", postgresql="double precision")
    db.execute(
        f"""
        CREATE TABLE prompt_candidates (
            id {identity},
            suite TEXT NOT NULL,
            subset TEXT NOT NULL DEFAULT '',
            item_key TEXT NOT NULL,
            text TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{{}}',
            source TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
            reviewer TEXT NOT NULL DEFAULT '',
            reason TEXT NOT NULL DEFAULT '',
            created_at {real} NOT NULL,              -- unix time
            decided_at {real},                       -- unix time of the decision; NULL while pending
            UNIQUE (suite, item_key)
        )"""
    )
    db.execute("CREATE INDEX prompt_candidates_status ON prompt_candidates (suite, status)")


def _open_prompts_counter(db: Database) -> None:
    """An open prompt's rows move their own ``data_versions`` counter, ``open_prompts``, not ``catalog``: its prompt
    (suite ``open``) and its images (``withheld = 'open prompt'``) are never drawn by a battle, and the readers of
    ``catalog`` (the sampler's counts, the prompt pool, the rendition keeper, the rating pool) read everything again
    when it moves, which at a million votes costs seconds per open prompt. The leaderboard's snapshots read every
    counter, so they still see them. A row counts as an open prompt's when it is one before and after the change."""
    db.execute("INSERT INTO data_versions (name) VALUES ('open_prompts')")
    # (table, whether a row (NEW or OLD) is an open prompt's)
    rows = (("prompts", "{row}.suite = 'open'"), ("images", "coalesce({row}.withheld, '') = 'open prompt'"))
    for table, is_open in rows:
        for event, checked in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            when = " AND ".join(f"({is_open.format(row=row)})" for row in checked)
            for name, counter, condition in ((f"{table}_{event.lower()}_version", "catalog", f"NOT ({when})"),
                                             (f"{table}_{event.lower()}_open_version", "open_prompts", when)):
                if is_postgres(db):
                    db.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
                    db.execute(f"CREATE CONSTRAINT TRIGGER {name} AFTER {event} ON {table} DEFERRABLE INITIALLY "
                               f"DEFERRED FOR EACH ROW WHEN ({condition}) EXECUTE FUNCTION arena_bump_version("
                               f"'{counter}')")
                else:
                    db.execute(f"DROP TRIGGER IF EXISTS {name}")
                    db.execute(f"CREATE TRIGGER {name} AFTER {event} ON {table} WHEN {condition} BEGIN UPDATE "
                               f"data_versions SET version = version + 1 WHERE name = '{counter}'; END")


def _four_image_votes(db: Database) -> None:
    """The four-image mode (:mod:`datamodel.kwise`): ``kwise_battles``, four images of one prompt from four models
    served to an annotator's session in slots 1-4 (an unguessable id and media token, as a battle's), and
    ``kwise_votes``, the annotator's pick: the best slot and optionally the worst, with the image ids they name. A
    vote moves the ``votes`` counter, so the leaderboard's snapshots see it."""
    identity = pick(db, sqlite="INTEGER PRIMARY KEY", postgresql="bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    real = pick(db, sqlite="REAL", postgresql="double precision")
    images = ", ".join(f"slot_{slot}_image_id INTEGER NOT NULL REFERENCES images(id)" for slot in range(1, 5))
    db.execute(
        f"""
        CREATE TABLE kwise_battles (
            id TEXT PRIMARY KEY,                     -- unguessable token
            prompt_id INTEGER NOT NULL REFERENCES prompts(id),
            {images},                                -- shown in slots 1-4, four different models
            annotator_id INTEGER NOT NULL REFERENCES annotators(id),
            session_id TEXT NOT NULL,
            media_token TEXT NOT NULL UNIQUE,        -- the page loads the four images through it
            strategy TEXT NOT NULL,
            served_at {real} NOT NULL
        )"""
    )
    db.execute("CREATE INDEX kwise_battles_session ON kwise_battles (session_id)")
    db.execute(
        f"""
        CREATE TABLE kwise_votes (
            id {identity},
            battle_id TEXT NOT NULL UNIQUE REFERENCES kwise_battles(id),
            annotator_id INTEGER NOT NULL REFERENCES annotators(id),
            best INTEGER NOT NULL CHECK (best BETWEEN 1 AND 4),
            worst INTEGER CHECK (worst IS NULL OR (worst BETWEEN 1 AND 4 AND worst <> best)),
            best_image_id INTEGER NOT NULL REFERENCES images(id),
            worst_image_id INTEGER REFERENCES images(id),
            seconds_to_vote {real},
            voted_at {real} NOT NULL,                -- unix time
            excluded INTEGER NOT NULL DEFAULT 0
        )"""
    )
    db.execute("CREATE INDEX kwise_votes_annotator ON kwise_votes (annotator_id)")
    for event in ("INSERT", "UPDATE", "DELETE"):
        if is_postgres(db):
            from datamodel.schema_postgresql import version_trigger_sql

            db.execute(version_trigger_sql("kwise_votes", "votes", event))
        else:
            db.execute(f"CREATE TRIGGER kwise_votes_{event.lower()}_version AFTER {event} ON kwise_votes "
                       "BEGIN UPDATE data_versions SET version = version + 1 WHERE name = 'votes'; END")


def _four_image_vote_flags(db: Database) -> None:
    """``kwise_votes.excluded_reason``: why the quality rules set a four-image vote aside (or, for a trusted account,
    noted it), as ``votes.excluded_reason`` says it for a pairwise vote (:mod:`datamodel.quality`)."""
    db.execute("ALTER TABLE kwise_votes ADD COLUMN excluded_reason TEXT NOT NULL DEFAULT ''")


def _four_image_reviews(db: Database) -> None:
    """An admin's review of four-image votes (:mod:`datamodel.reviews`): ``kwise_votes.reviewed``, 1 once an admin
    excluded or included the vote (final: the quality rules leave it alone), as ``votes.reviewed``; and
    ``admin_actions.vote_kind``, the kind of the one vote an action reviewed (``pairwise`` or ``four-image``; '' for an
    action on an annotator's or a rule's votes, which covers both kinds)."""
    db.execute("ALTER TABLE kwise_votes ADD COLUMN reviewed INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE admin_actions ADD COLUMN vote_kind TEXT NOT NULL DEFAULT ''")
    db.execute("UPDATE admin_actions SET vote_kind = 'pairwise' WHERE vote_id IS NOT NULL")


def _four_image_vote_changes(db: Database) -> None:
    """``kwise_vote_changes``: every change to which four-image votes count, in commit order, so that each app
    process keeps the four-image sampler's counts exact with the votes of the others
    (:class:`sampling.kwise_stats.KwiseStats`, reading :func:`datamodel.kwise.kwise_changes_since`), as
    ``vote_changes`` does for pairwise votes (:func:`_vote_changes`, whose commit-order argument holds here too).

    One row (``seq``, ascending) per four-image vote that starts counting (+1: inserted not excluded, or included
    again) or stops (−1: excluded, or deleted), with the vote's id, battle, best and worst slots (a battle is never
    changed, so its four images and models are read through it). Votes already stored count from the next full
    read."""
    def insert(which: str, sign: str) -> str:
        return (f"INSERT INTO kwise_vote_changes (vote_id, sign, battle_id, best, worst) VALUES ({which}.id, {sign}, "
                f"{which}.battle_id, {which}.best, {which}.worst);")

    if is_postgres(db):
        db.execute("CREATE TABLE kwise_vote_changes (seq bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                   "vote_id bigint NOT NULL, sign integer NOT NULL, battle_id text NOT NULL, best integer NOT NULL, "
                   "worst integer)")
    else:
        db.execute("CREATE TABLE kwise_vote_changes (seq INTEGER PRIMARY KEY, vote_id INTEGER NOT NULL, "
                   "sign INTEGER NOT NULL, battle_id TEXT NOT NULL, best INTEGER NOT NULL, worst INTEGER)")
    _log_changes(db, "kwise_votes", "arena_log_kwise_vote_change", insert)


def _change_log_retention(db: Database) -> None:
    """The change logs ``vote_changes`` and ``kwise_vote_changes`` are pruned (:mod:`datamodel.change_logs`): each row
    gains ``logged_at``, the unix time its trigger logged it (the database's clock; the rows logged before this
    migration take its time, so they are kept one retention from now), and ``change_log_pruned`` holds, per log, the
    largest ``seq`` deleted so far (``through_seq``), which a reader compares with the last row it read: below it, it
    missed rows and reads everything again. The triggers are written again with the time (the facts they log are
    those of :func:`_vote_changes` and :func:`_four_image_vote_changes`)."""
    real = pick(db, sqlite="REAL", postgresql="double precision")
    logged_at = pick(db, sqlite="((julianday('now') - 2440587.5) * 86400.0)",
                     postgresql="extract(epoch FROM clock_timestamp())::double precision")
    for log in ("vote_changes", "kwise_vote_changes"):
        db.execute(f"ALTER TABLE {log} ADD COLUMN logged_at {real}")
        db.execute(f"UPDATE {log} SET logged_at = {logged_at}")
    db.execute(f"CREATE TABLE change_log_pruned (log TEXT PRIMARY KEY, "
               f"through_seq {pick(db, sqlite='INTEGER', postgresql='bigint')} NOT NULL)")
    facts = ", ".join(_VOTE_FACT_COLUMNS)

    def vote(which: str, sign: str) -> str:
        values = ", ".join(f"{which}.{column}" for column in _VOTE_FACT_COLUMNS)
        return (f"INSERT INTO vote_changes (vote_id, sign, {facts}, logged_at) VALUES ({which}.id, {sign}, {values}, "
                f"{logged_at});")

    def four_image_vote(which: str, sign: str) -> str:
        return (f"INSERT INTO kwise_vote_changes (vote_id, sign, battle_id, best, worst, logged_at) VALUES "
                f"({which}.id, {sign}, {which}.battle_id, {which}.best, {which}.worst, {logged_at});")

    _log_changes(db, "votes", "arena_log_vote_change", vote, replace=True)
    _log_changes(db, "kwise_votes", "arena_log_kwise_vote_change", four_image_vote, replace=True)


MIGRATIONS: list[Callable[[Database], None]] = [
    _initial_schema,
    _judges_schema,
    _study_scale,
    _metric_directions,
    _annotator_identity,
    _votes_by_annotator_prompt,
    _expected_shown,
    _datasette_views,
    _annotator_sessions,
    _judgment_template_version,
    _guidelines_seen,
    _imported_votes,
    _image_requests,
    _metric_variant,
    _human_ratings,
    _vote_details_without_names,
    _shown_images,
    _signing_out,
    _rating_details_without_names,
    _admin_actions,
    _leaderboard_history,
    _vote_changes,
    _snapshot_claims,
    _rate_events,
    _shared_web_state,
    _open_prompts,
    _imported_vote_flags,
    _prompt_candidates,
    _open_prompts_counter,
    _four_image_votes,
    _four_image_vote_flags,
    _four_image_reviews,
    _four_image_vote_changes,
    _change_log_retention,
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaError(ValueError):
    """The database cannot be brought to this code's schema; the message names it and says what to do."""


def schema_version(db: Database) -> int:
    if is_postgres(db):
        from datamodel import schema_postgresql

        return schema_postgresql.schema_version(db)
    return db.execute("PRAGMA user_version").fetchone()[0]


def migrate(db: Database) -> int:
    """Apply the migrations the database lacks, each in its own transaction; return the new version. A PostgreSQL
    database starts from its baseline (:mod:`datamodel.schema_postgresql`), then runs the same later migrations."""
    if is_postgres(db):
        from datamodel import schema_postgresql

        return schema_postgresql.migrate(db, MIGRATIONS, SCHEMA_VERSION)
    version = schema_version(db)
    if version > SCHEMA_VERSION:
        raise SchemaError(f"{database_file(db) or ':memory:'} has schema version {version}, newer than this code's "
                          f"{SCHEMA_VERSION}. Upgrade the arena package or open a copy of the database.")
    for number in range(version, SCHEMA_VERSION):
        try:
            with db.conn:
                if schema_version(db) > number:  # another process migrated meanwhile
                    continue
                MIGRATIONS[number](db)
                db.execute(f"PRAGMA user_version = {number + 1}")
        except sqlite3.DatabaseError as error:  # rolled back: the file stays at version ``number``
            raise SchemaError(
                f"{database_file(db) or ':memory:'}: migration {number + 1} of {SCHEMA_VERSION} "
                f"({MIGRATIONS[number].__name__}) failed: {error}. The database is unchanged, at schema version "
                f"{number}. A database whose tables do not match its recorded version was made or changed by another "
                "version of the arena: open it with that version, or restore a backup (python -m arena backup makes "
                "one).") from error
    return schema_version(db)


def database_file(db: Database) -> str | None:
    """The file of a SQLite database; None for one in memory."""
    return next((file for _, name, file in db.execute("PRAGMA database_list") if name == "main"), None) or None
