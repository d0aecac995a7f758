"""How long the admin takes to exclude a spammer: ``python -m tools.admin_bench``.

Builds a throwaway copy of the demo database (the shipped bundle: 76 prompts, four demo models), adds ``--careful``
careful annotators with ``--careful-votes`` votes each and one spammer with ``--votes`` votes (one side every time,
cast in a fast run), then times, each ``--repeat`` times (excluding and including back in turn):

- **the action**: :func:`datamodel.reviews.review_votes` excluding every vote of the spammer, with a reason (one
  transaction);
- **the action as the admin sees it**: the Admin tab's event (``admin_bulk_exclude``) on the running web app, called
  as the page calls it after an unlock, from the request to the answer that carries the confirmation and every table
  read again (annotators, flagged votes, coverage per model, pair and prompt, the actions' log).

Prints the median and the largest of each. The issue's target: under a second for a 500-vote spammer.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

PASSWORD = "admin-bench-password"


def build(root: Path, votes: int, careful: int, careful_votes: int):
    """The demo database under ``root`` with the annotators and their votes; its settings."""
    from arena import session as sessions
    from arena.demo.seeding import load_demo_bundle
    from core.settings import Settings
    from datamodel.connection import connect
    from datamodel.media import MediaStore

    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache", demo=False,
                        admin_password=PASSWORD)
    db = connect(settings.db_path)
    load_demo_bundle(db, MediaStore.from_settings(settings))
    rules, rng = settings.quality_rules, random.Random(0)
    start = time.time() - 7 * 86400

    def cast(name: str, count: int, every: float, outcome=None) -> None:
        s = sessions.start(db, name, f"{name}-token", open_signup=True)
        for i in range(count):
            at = start + i * every
            s = sessions.next_battle(db, rng, s, now=at - 1)
            s = sessions.vote(db, s, outcome or rng.choice(("A", "B", "tie")), rules=rules, now=at)

    for index in range(careful):
        cast(f"careful-{index}", careful_votes, 9.0)
    cast("spammer", votes, 1.0, "A")
    db.close()
    return settings


def time_library(settings, repeat: int) -> list[float]:
    """Seconds of each review_votes call (exclude, include, exclude, ...) on the spammer's votes."""
    from datamodel.connection import connect
    from datamodel.reviews import review_votes

    db = connect(settings.db_path)
    seconds = []
    for round_ in range(repeat):
        started = time.perf_counter()
        review_votes(db, exclude=round_ % 2 == 0, reason="admin bench", annotator="spammer")
        seconds.append(time.perf_counter() - started)
    db.close()
    return seconds


def time_page(settings, repeat: int) -> tuple[list[float], str]:
    """Seconds from the Admin tab's request to its answer, and the confirmation it showed last."""
    import httpx

    from tools.load import GradioSession, fetch_endpoints
    from tools.page_timing import serve

    url, server = serve(settings)

    async def run() -> tuple[list[float], str]:
        async with httpx.AsyncClient(timeout=60) as client:
            session = GradioSession(client, url, await fetch_endpoints(client, url))
            await session.call("admin_unlock", [PASSWORD, None])
            seconds, shown = [], ""
            for round_ in range(repeat):
                event = "admin_bulk_exclude" if round_ % 2 == 0 else "admin_bulk_include"
                started = time.perf_counter()
                answer = await session.call(event, [None, "spammer", "", "admin bench"])
                seconds.append(time.perf_counter() - started)
                shown = str(answer[0])
            return seconds, shown

    try:
        return asyncio.run(run())
    finally:
        server.should_exit = True


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.1f} ms · max {max(values) * 1000:7.1f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.admin_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--votes", type=int, default=500, help="the spammer's votes (default 500)")
    parser.add_argument("--careful", type=int, default=5, help="careful annotators beside the spammer (default 5)")
    parser.add_argument("--careful-votes", type=int, default=60, help="votes of each careful annotator (default 60)")
    parser.add_argument("--repeat", type=int, default=6, help="actions timed, excluding and including in turn")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="admin-bench-") as root:
        started = time.perf_counter()
        settings = build(Path(root), args.votes, args.careful, args.careful_votes)
        print(f"demo database with a {args.votes}-vote spammer and {args.careful} careful annotators "
              f"({args.careful * args.careful_votes} votes) built in {time.perf_counter() - started:.1f} s")
        alone = summary(time_library(settings, args.repeat))
        print(f"exclude every vote of the spammer, the action alone:     {alone}")
        seconds, shown = time_page(settings, args.repeat)
        print(f"the same from the Admin tab (request to answer, tables): {summary(seconds)}")
        print(f"the page's confirmation: {shown}")


if __name__ == "__main__":
    main()
