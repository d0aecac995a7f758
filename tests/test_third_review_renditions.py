"""The third security review (issue 23), finding 1 and the broken-image item: every image is rendered before it can be
served, on every path that adds images or changes the rendition settings, and a battle never includes an image
without its rendition.

Before: display renditions were made lazily on an image's first request except after ``import-images``, and render
time follows the original's size and format, so the time to first byte named the model (91.3% of fresh images with
four native sizes; 31.8% against 25% on the shipped demo). The tests below check the cause: after each path, images
without a rendition file, and renditions made while a request waits.
"""

from __future__ import annotations

import random

import httpx
import pytest
from PIL import Image
from support.arena import build_small_arena
from support.webapp import running_app

from arena import session as sessions
from core.settings import Settings
from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from datamodel.renditions import RenditionSpec


def unrendered(settings: Settings) -> list[str]:
    """The media files of the database's images that have no display rendition file for ``settings``."""
    spec = RenditionSpec.from_settings(settings)
    folder = settings.media_dir / "renditions" / spec.key
    db = connect(settings.db_path)
    try:
        rows = db.execute("SELECT DISTINCT media_hash FROM images").fetchall()
    finally:
        db.close()
    assert rows, "no images to check"
    return [h for h, in rows if not (folder / h[:2] / f"{h}.{spec.ext}").is_file()]


def _env(monkeypatch, settings: Settings, tmp_path) -> None:
    (tmp_path / "empty.toml").write_text("")
    for name, value in {"ARENA_DB": settings.db_path, "ARENA_MEDIA_DIR": settings.media_dir,
                        "ARENA_CONFIG": tmp_path / "empty.toml", "ARENA_DEMO": "false"}.items():
        monkeypatch.setenv(name, str(value))


@pytest.mark.slow
def test_loading_the_demo_renders_every_image(tmp_path, monkeypatch):
    from arena.commands import main

    settings = Settings(db_path=tmp_path / "arena.db", media_dir=tmp_path / "media", demo=False)
    _env(monkeypatch, settings, tmp_path)
    assert main(["demo"]) == 0
    missing = unrendered(settings)
    assert missing == [], f"{len(missing)} demo images have no display rendition after `python -m arena demo`"


def test_python_m_generators_run_renders_every_image(tmp_path, monkeypatch):
    from generators.commands import main

    settings = Settings(db_path=tmp_path / "arena.db", media_dir=tmp_path / "media", demo=False)
    db = connect(settings.db_path)
    add_prompts(db, [PromptSpec("s", f"k{i}", f"thing {i}") for i in range(3)])
    db.close()
    _env(monkeypatch, settings, tmp_path)
    assert main(["run", "--models", "demo-sketch,demo-scribble", "--suite", "s", "--quiet"]) == 0
    missing = unrendered(settings)
    assert missing == [], f"{len(missing)} of 6 images have no display rendition after `python -m generators run`"


def test_import_images_renders_every_image(tmp_path, monkeypatch):
    from arena.commands import main

    settings = Settings(db_path=tmp_path / "arena.db", media_dir=tmp_path / "media", demo=False)
    (tmp_path / "prompts.csv").write_text("key,text\ncat,A cat\n")
    for model, side in (("small", 64), ("large", 1024)):
        (tmp_path / "imgs" / model).mkdir(parents=True)
        Image.new("RGB", (side, side), (side % 256, 0, 0)).save(tmp_path / "imgs" / model / "cat.png")
    _env(monkeypatch, settings, tmp_path)
    assert main(["import-images", str(tmp_path / "imgs"), "--prompts", str(tmp_path / "prompts.csv")]) == 0
    assert unrendered(settings) == []


@pytest.mark.slow
def test_regenerating_the_demo_renders_every_image(tmp_path, monkeypatch):
    """The images are made as `demo --regenerate` makes them; the metrics (tests/test_demo_metrics.py) are left out."""
    from arena.commands import main
    from arena.demo import metrics as demo_metrics
    from arena.demo import seeding as demo_module
    from core.settings import load_settings
    from generators.procedural import emoji_font

    if emoji_font() is None:
        pytest.skip("needs Debian's fonts-noto-color-emoji (make install)")
    settings = Settings(db_path=tmp_path / "arena.db", media_dir=tmp_path / "media", demo=False)
    _env(monkeypatch, settings, tmp_path)
    monkeypatch.setenv("ARENA_CACHE_DIR", str(load_settings().cache_dir.resolve()))
    monkeypatch.setattr(demo_metrics, "compute_demo_metrics", lambda *args, **kwargs: None)
    # Every tenth demo prompt (11 of 109, every suite): rendering after the build does not depend on how many images
    # it made, and the whole demo's generation is built by tests/test_demo_metrics.py (CPU time, issue 24).
    every_tenth = demo_module.demo_prompt_specs()[::10]
    assert {spec.key[0] for spec in every_tenth} == {spec.key[0] for spec in demo_module.demo_prompt_specs()}
    monkeypatch.setattr(demo_module, "demo_prompt_specs", lambda: every_tenth)
    assert main(["demo", "--regenerate"]) == 0
    missing = unrendered(settings)
    assert missing == [], f"{len(missing)} images have no display rendition after `python -m arena demo --regenerate`"


def test_a_server_started_with_new_rendition_settings_renders_every_image_before_it_serves(tmp_path):
    """ARENA_DISPLAY_SIZE changed: the server renders every image for the new settings before its first answer."""
    from arena.web.app import create_server

    arena = build_small_arena(tmp_path)
    arena.db.close()
    changed = arena.settings.replace(display_size=512, display_format="webp")
    create_server(changed)  # what `serve` builds before it listens
    missing = unrendered(changed)
    assert missing == [], f"{len(missing)} images have no rendition for the new display settings at start"


def _raw_arena(tmp_path, sides=(64, 2048)) -> tuple[Settings, dict[int, str]]:
    """Two models whose images are added the low-level way (catalog.add_image, as a script might), not rendered.

    Each image is one flat colour (its prompt's and its size's): what these tests check (a rendition file or none,
    battles drawn or not) does not depend on the pixels, and noise at 2048 px cost seconds of PNG compression per
    image (CPU time, issue 24); the sizes are kept, so rendering still reads and shrinks originals of each size."""
    settings = Settings(db_path=tmp_path / "arena.db", media_dir=tmp_path / "media", cache_dir=tmp_path / "cache",
                        demo=False)
    db, media = connect(settings.db_path), MediaStore(settings.media_dir)
    prompt_ids = add_prompts(db, [PromptSpec("s", f"k{i}", f"thing {i}") for i in range(4)]).ids
    models = {}
    for side in sides:
        model_id = add_model(db, f"model-{side}")
        for p, prompt_id in enumerate(prompt_ids):
            image = Image.new("RGB", (side, side), (40 + p, side % 251, 90))
            image_id = add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(image))
            models[image_id] = f"model-{side}"
    db.close()
    return settings, models


@pytest.mark.slow  # 8.4 s on the quiet machine (make check, 2026-11-26)
def test_no_battle_is_drawn_with_an_image_that_has_no_rendition(tmp_path):
    settings, _ = _raw_arena(tmp_path)
    db = connect(settings.db_path)
    s = sessions.start(db, "voter", "token-for-the-voter", open_signup=True)
    drawn = []
    for i in range(20):
        try:
            s = sessions.next_battle(db, random.Random(i), s)
        except Exception as error:  # NoBattleAvailable: nothing rendered, nothing drawn
            drawn.append(type(error).__name__)
            continue
        drawn.append((s.battle.left.image_id, s.battle.right.image_id))
    db.close()
    assert all(d == "NoBattleAvailable" for d in drawn), drawn[:5]


@pytest.mark.slow  # 9.0 s on the quiet machine (make check, 2026-11-26)
def test_no_rendition_is_made_while_a_request_waits(tmp_path, monkeypatch):
    """The server renders what an earlier path left unrendered before it serves; once serving, every battle image is
    read from its file, never rendered on request (not even the prefetch of the next battle)."""
    from datamodel import renditions

    settings, _ = _raw_arena(tmp_path)
    with running_app(settings) as url:
        made = []
        real = renditions.render
        monkeypatch.setattr(renditions, "render", lambda *a, **k: made.append(1) or real(*a, **k))
        from gradio_client import Client

        client = Client(url, verbose=False)
        shown = client.predict("timing-voter", "a-long-enough-token", api_name="/sign_in")
        voted = client.predict("All suites", False, _token(shown), api_name="/vote_a")
        with httpx.Client(timeout=30) as http:
            answers = [http.get(url + source) for source in _sources(shown, voted)]
    assert [a.status_code for a in answers] == [200] * 4
    assert made == [], f"{len(made)} renditions were made while requests waited"


def test_a_rendition_lost_after_the_draw_is_not_made_on_request_and_the_image_is_withdrawn(tmp_path):
    """A rendition file that disappears (a media folder restored without its renditions) is answered 404, not made
    while the voter waits; its image is drawn no more until it is rendered again."""
    arena = build_small_arena(tmp_path)
    s = sessions.start(arena.db, "voter", "token-for-the-voter", open_signup=True)
    s = sessions.next_battle(arena.db, random.Random(0), s)
    image_id = s.battle.left.image_id
    media_hash = arena.db.execute("SELECT media_hash FROM images WHERE id = ?", [image_id]).fetchone()[0]
    spec = RenditionSpec.from_settings(arena.settings)
    arena.db.close()
    with running_app(arena.settings) as url:
        (arena.settings.media_dir / "renditions" / spec.key / media_hash[:2] / f"{media_hash}.{spec.ext}").unlink()
        answer = httpx.get(f"{url}battle-media/{s.battle.media_token}/a", timeout=30)
        db = connect(arena.settings.db_path)
        drawn = {image for i in range(60) for image in _draw(db, i)}
        db.close()
    assert answer.status_code == 404
    assert image_id not in drawn


def test_a_broken_image_is_never_drawn(tmp_path):
    """Before: an image whose original cannot be read kept being drawn into battles (each showing a broken image)."""
    arena = build_small_arena(tmp_path)
    broken_id, media_hash, ext = arena.db.execute("SELECT id, media_hash, media_ext FROM images LIMIT 1").fetchone()
    (arena.settings.media_dir / media_hash[:2] / f"{media_hash}.{ext}").write_bytes(b"\x89PNG broken")
    for rendition in (arena.settings.media_dir / "renditions").rglob(f"{media_hash}.*"):
        rendition.unlink()
    arena.db.close()
    with running_app(arena.settings):  # the server's start renders what is missing, and cannot render this one
        db = connect(arena.settings.db_path)
        drawn = {image for i in range(150) for image in _draw(db, i)}
        db.close()
    assert broken_id not in drawn and len(drawn) > 10


def _draw(db, seed: int) -> tuple[int, int]:
    from sampling.draws import serve_battle

    battle = serve_battle(db, random.Random(seed), session_id=f"check-{seed}", judge="check")
    return battle.left.image_id, battle.right.image_id


def _token(shown) -> str:
    import re

    found = re.search(r"battle-media/([A-Za-z0-9_-]+)/a", str(shown))
    assert found is not None, shown
    return found.group(1)


def _sources(*answers) -> list[str]:
    import re

    return sorted(set(re.findall(r'src=\\?"(battle-media/[A-Za-z0-9_-]+/[ab])', "".join(map(str, answers)))))


@pytest.mark.slow  # 11.6 s on the quiet machine (make check, 2026-11-26)
def test_images_of_four_native_sizes_are_all_rendered_before_the_first_battle(tmp_path):
    """The reviewer's setting (four models of different native sizes, images added without import-images): once the
    server is up, every image already has its rendition, so the first request for any of them reads a file of one
    size, whatever the model."""
    settings, models = _raw_arena(tmp_path, sides=(64, 512, 1024, 2048))
    with running_app(settings) as url:
        missing = unrendered(settings)
        with httpx.Client(timeout=30) as http:
            assert http.get(url + "config").status_code == 200
    assert missing == [] and len(set(models.values())) == 4

