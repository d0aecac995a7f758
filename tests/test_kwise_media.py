"""A four-image battle's images reach the browser as a pairwise battle's do (the anonymity of issue 15): through the
battle's unguessable media token only, as display renditions of one size, format and padded length, with the same
headers, and nothing for a wrong token or slot."""

import random

import httpx
import pytest
from support.webapp import running_app

from arena import session as sessions
from arena.four_image_session import next_four
from datamodel.renditions import Renditions


@pytest.mark.slow  # starts the app
def test_the_four_images_are_renditions_alike_through_the_token_only(small_arena):
    db = small_arena.db
    session = sessions.start(db, "kim", "a-long-token-1", open_signup=True)
    battle = next_four(db, random.Random(3), session, None, suites=["taxonomy"], strategy="uniform").battle
    hashes = [db.execute("SELECT media_hash FROM images WHERE id = ?", [i]).fetchone()[0] for i in battle.image_ids]
    renditions = Renditions.from_settings(small_arena.media, small_arena.settings)
    with running_app(small_arena.settings) as url:
        answers = [httpx.get(f"{url}kwise-media/{battle.media_token}/{slot}") for slot in range(1, 5)]
        assert [a.status_code for a in answers] == [200] * 4
        assert len({len(a.content) for a in answers}) == 1  # one padded length for the four models
        headers = [{k: v for k, v in a.headers.items() if k != "date"} for a in answers]
        assert all(h == headers[0] for h in headers)
        assert headers[0]["content-type"].startswith("image/")
        assert [a.content for a in answers] == [renditions.path(h).read_bytes() for h in hashes]
        for wrong in (f"kwise-media/{battle.media_token}/5", f"kwise-media/{battle.media_token}/0",
                      f"kwise-media/{'x' * 24}/1", f"battle-media/{battle.media_token}/a"):
            assert httpx.get(url + wrong).status_code == 404, wrong
