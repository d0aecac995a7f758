"""The server's rendition keeper (arena.rendition_keeper): an image added while the server runs is rendered for
display by its watching thread, also on a database whose catalog change counter is missing."""

import time

import pytest
from support.arena import make_image

from arena.rendition_keeper import RenditionKeeper
from datamodel.catalog import add_image, add_model
from datamodel.connection import Store
from datamodel.media import MediaStore
from datamodel.renditions import Renditions, unrendered_count

pytestmark = pytest.mark.both_engines


def _rendered_soon(db, key, seconds=10.0) -> bool:
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        if unrendered_count(db, key) == 0:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("counter", ["kept", "deleted by hand"])
def test_an_image_added_while_the_server_runs_is_rendered(small_arena, counter):
    db = small_arena.db
    if counter != "kept":
        with db.conn:
            db.execute("DELETE FROM data_versions WHERE name = 'catalog'")
    store = Store(small_arena.settings.database)
    renditions = Renditions.from_settings(MediaStore.from_settings(small_arena.settings), small_arena.settings)
    keeper = RenditionKeeper(store, renditions, check_s=0.05)
    keeper.start()
    try:
        key = renditions.spec.key
        assert unrendered_count(db, key) == 0
        model_id = add_model(db, "late-model")
        add_image(db, prompt_id=small_arena.prompt_ids[0], model_id=model_id,
                  stored=small_arena.media.put_image(make_image(9, 0)))
        assert _rendered_soon(db, key), "the keeper never rendered the new image"
    finally:
        keeper.close()
        store.close()
