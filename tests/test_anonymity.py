"""Anonymity of the served images (issue 15): whatever the models' native sizes, formats and colour profiles, the two
images of a battle reach the browser alike, so nothing but their pixels tells the models apart before the vote.

The arena here is built the way users build one, with ``python -m arena import-images``, from six models whose files
differ the ways real models' do: a 64 px PNG (DeepFloyd IF stage I), a 512 px JPEG with an ICC profile named after
its model and EXIF (SD 1.5), a 1024 px lossy WebP (SDXL), a 16-bit grey PNG, a CMYK JPEG, and a 1024×768 PNG with
transparency whose ICC profile is named "FLUX.1-schnell". Battles are drawn as the arena draws them and every image is
fetched from the running server (uvicorn) as a browser would.
"""

from __future__ import annotations

import io
import random
import struct
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image, ImageCms, ImageDraw, ImageFilter
from support.webapp import running_app

from arena.importer import ImageImportError, import_images
from core.settings import Settings
from datamodel.connection import connect
from datamodel.media import MediaStore

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = ("cat", "harbour", "clock", "forest")
SECRETS = (b"FLUX", b"flux", b"schnell", b"sd-1.5", b"Stable Diffusion", b"ICC_PROFILE", b"Exif", b"acsp",
           b"http://ns.adobe.com/xap")
BATTLES = 150
VARYING_HEADERS = {"date"}  # the time of the answer: the same for both sides up to the second, never the model's


def profile_bytes(name: str, swap_red_and_blue: bool = False) -> bytes:
    """An sRGB ICC profile whose description is ``name``; optionally with the red and blue primaries swapped, so
    that a colour-managed pixel (255, 0, 0) is sRGB blue."""
    base = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    text = name.encode("utf-16-be")
    description = b"mluc" + b"\0" * 4 + struct.pack(">II", 1, 12) + b"enUS" + struct.pack(">II", len(text), 28) + text
    description += b"\0" * (-len(description) % 4)
    count = struct.unpack(">I", base[128:132])[0]
    table = bytearray(base[:132 + 12 * count])
    where = {base[132 + 12 * i:136 + 12 * i]: 132 + 12 * i for i in range(count)}
    struct.pack_into(">II", table, where[b"desc"] + 4, len(base), len(description))
    if swap_red_and_blue:
        red, blue = table[where[b"rXYZ"] + 4:where[b"rXYZ"] + 12], table[where[b"bXYZ"] + 4:where[b"bXYZ"] + 12]
        table[where[b"rXYZ"] + 4:where[b"rXYZ"] + 12], table[where[b"bXYZ"] + 4:where[b"bXYZ"] + 12] = blue, red
    profile = bytearray(bytes(table) + base[len(table):] + description)
    struct.pack_into(">I", profile, 0, len(profile))
    profile[84:100] = bytes(16)  # no profile ID (an MD5 of the profile) after the change
    return bytes(profile)


def picture(size: tuple[int, int], seed: int) -> Image.Image:
    """A smooth background, coloured discs and a little grain: compresses about as a generated image does."""
    rng = random.Random(seed)
    width, height = size
    image = Image.linear_gradient("L").rotate(rng.randrange(360)).resize(size).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(40):
        x, y, r = rng.randrange(width), rng.randrange(height), rng.randrange(max(2, width // 30), max(3, width // 5))
        draw.ellipse([x - r, y - r, x + r, y + r], fill=tuple(rng.randrange(256) for _ in range(3)))
    grain = Image.effect_noise(size, 24).convert("RGB")
    return Image.blend(image.filter(ImageFilter.GaussianBlur(width / 300)), grain, 0.12)


def _encoded(image: Image.Image, format: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=format, **options)
    return buffer.getvalue()


def _exif(model: str) -> bytes:
    exif = Image.Exif()
    exif[0x0131] = f"{model} (Stable Diffusion)"  # Software
    exif[0x010E] = f"made by {model}"  # ImageDescription
    return exif.tobytes()


def _sixteen_bit(seed: int) -> Image.Image:
    grey = np.asarray(picture((768, 768), seed).convert("L"), dtype=np.uint16) * 257
    return Image.fromarray(grey)  # mode I;16


# model -> (file suffix, bytes of its image for a prompt seed): the six kinds of the issue
KINDS = {
    "if-stage-1": ("png", lambda seed: _encoded(picture((64, 64), seed), "PNG")),
    "sd-1.5": ("jpg", lambda seed: _encoded(picture((512, 512), seed), "JPEG", quality=92,
                                            icc_profile=profile_bytes("sd-1.5"), exif=_exif("sd-1.5"))),
    "sdxl-1.0": ("webp", lambda seed: _encoded(picture((1024, 1024), seed), "WEBP", quality=90)),
    "sd-2.1-16bit": ("png", lambda seed: _encoded(_sixteen_bit(seed), "PNG")),
    "print-cmyk": ("jpg", lambda seed: _encoded(picture((640, 480), seed).convert("CMYK"), "JPEG", quality=90)),
    "flux-1-schnell": ("png", lambda seed: _encoded(picture((1024, 768), seed).convert("RGBA"), "PNG",
                                                    icc_profile=profile_bytes("FLUX.1-schnell"))),
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """An arena of the six kinds, imported with the command users run; (settings, {image id: model})."""
    root = tmp_path_factory.mktemp("anonymity")
    (root / "prompts.csv").write_text("key,text\n" + "".join(f"{key},A picture of {key}\n" for key in PROMPTS))
    for m, (model, (suffix, make)) in enumerate(KINDS.items()):
        (root / "imgs" / model).mkdir(parents=True)
        for p, key in enumerate(PROMPTS):
            (root / "imgs" / model / f"{key}.{suffix}").write_bytes(make(100 * m + p))
    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache", demo=False)
    env = {"ARENA_DB": str(settings.db_path), "ARENA_MEDIA_DIR": str(settings.media_dir), "PATH": "/usr/bin:/bin",
           "ARENA_CONFIG": str(root / "arena.toml")}
    (root / "arena.toml").write_text("")
    done = subprocess.run([sys.executable, "-m", "arena", "import-images", str(root / "imgs"), "--prompts",
                           str(root / "prompts.csv")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    db = connect(settings.db_path)
    models = dict(db.execute("SELECT i.id, m.name FROM images i JOIN models m ON m.id = i.model_id").fetchall())
    db.close()
    assert sorted(Counter(models.values()).items()) == sorted((model, len(PROMPTS)) for model in KINDS)
    return settings, models


@pytest.fixture(scope="module")
def imported_url(imported):
    """The URL of the app serving the imported arena: one app for the module's two tests that fetch through it (they
    already share its database), instead of one each (~0.7 s of CPU)."""
    settings, _ = imported
    with running_app(settings) as url:
        yield url


def _battles(settings: Settings, n: int, seed: int = 0):
    """``n`` battles drawn uniformly, as the arena draws them: (media token, model A, model B)."""
    from sampling.draws import serve_battle

    db, rng = connect(settings.db_path), random.Random(seed)
    models = dict(db.execute("SELECT i.id, m.name FROM images i JOIN models m ON m.id = i.model_id").fetchall())
    drawn = []
    for i in range(n):
        battle = serve_battle(db, rng, session_id=f"anonymity-{seed}-{i}", judge="anonymity-test")
        drawn.append((battle.media_token, models[battle.left.image_id], models[battle.right.image_id]))
    db.close()
    return drawn


def _fetch(client: httpx.Client, url: str, token: str, side: str):
    response = client.get(f"{url}battle-media/{token}/{side}")
    assert response.status_code == 200, response.text
    headers = tuple(sorted((k.lower(), v) for k, v in response.headers.items() if k.lower() not in VARYING_HEADERS))
    return headers, response.content


def _look(body: bytes) -> dict:
    """What a voter's browser (or its developer tools) can see of a served image without looking at its pixels."""
    with Image.open(io.BytesIO(body)) as image:
        image.load()
        return {"format": image.format, "size": image.size, "mode": image.mode, "info": sorted(image.info),
                "exif": dict(image.getexif()), "segments": [m for m, _ in getattr(image, "applist", [])]}


def best_rule_accuracy(features: list, labels: list, split: float = 0.5) -> tuple[float, float]:
    """(accuracy, chance) of the best rule on ``features`` alone: each distinct feature value of the first part is
    mapped to its most common label, and the rule is scored on the rest (unseen values: the overall most common
    label). Chance is the share of the most common label in the rest, what guessing it every time scores."""
    cut = int(len(features) * split)
    seen: dict = defaultdict(Counter)
    for feature, label in zip(features[:cut], labels[:cut]):
        seen[feature][label] += 1
    fallback = Counter(labels[:cut]).most_common(1)[0][0]
    rule = {feature: counts.most_common(1)[0][0] for feature, counts in seen.items()}
    rest = list(zip(features[cut:], labels[cut:]))
    accuracy = sum(rule.get(feature, fallback) == label for feature, label in rest) / len(rest)
    chance = Counter(label for _, label in rest).most_common(1)[0][1] / len(rest)
    return accuracy, chance


@pytest.mark.slow
def test_both_sides_of_every_battle_are_served_alike_and_the_model_cannot_be_told(imported, imported_url):
    settings, _ = imported
    url = imported_url
    drawn = _battles(settings, BATTLES)
    features, labels, looks, bodies = [], [], [], []
    with httpx.Client(timeout=30) as client:
        for token, model_a, model_b in drawn:
            (headers_a, body_a), (headers_b, body_b) = (_fetch(client, url, token, side) for side in "ab")
            assert headers_a == headers_b, (model_a, model_b)  # content-length included: padded alike
            for body, headers, model in ((body_a, headers_a, model_a), (body_b, headers_b, model_b)):
                look = _look(body)
                looks.append(look)
                bodies.append(body)
                features.append((len(body), look["size"], look["format"], headers))
                labels.append(model)
    # one size, one format, one set of headers (length included), no metadata at all
    assert {(look["format"], look["size"], look["mode"]) for look in looks} == {("JPEG", (768, 768), "RGB")}
    assert all(look["info"] == ["jfif", "jfif_density", "jfif_unit", "jfif_version"] for look in looks)
    assert all(look["exif"] == {} and look["segments"] == ["APP0"] for look in looks)
    for body in bodies:
        assert not [secret for secret in SECRETS if secret in body]
        assert body.rstrip(b"\0").endswith(b"\xff\xd9")  # after the image's end: zero padding, nothing else
    assert len(set(features)) == 1 and len(set(labels)) == len(KINDS)
    accuracy, chance = best_rule_accuracy(features, labels)
    print(f"\nserved renditions: the best rule on (length, dimensions, format, headers) names the model of "
          f"{accuracy:.1%} of {len(labels) - len(labels) // 2} images; guessing the most common model: {chance:.1%}")
    assert accuracy <= chance


@pytest.mark.slow
def test_the_stored_originals_would_name_the_model(imported):
    """The same rule on what the originals would have shown (their length, dimensions and format) names the model
    almost every time: the served renditions above are what stops it. The originals themselves stay untouched for
    metrics, exports and judges: the FLUX file keeps its colour profile (only its EXIF is gone, since import)."""
    settings, models = imported
    media = MediaStore(settings.media_dir)
    db = connect(settings.db_path)
    stored = {i: (h, e) for i, h, e in db.execute("SELECT id, media_hash, media_ext FROM images")}
    db.close()
    features, labels = [], []
    rng = random.Random(2)
    for _ in range(2 * BATTLES):
        image_id = rng.choice(sorted(stored))
        data = media.path(*stored[image_id]).read_bytes()
        with Image.open(io.BytesIO(data)) as image:
            features.append((len(data), image.size, image.format))
        labels.append(models[image_id])
    accuracy, chance = best_rule_accuracy([(size, fmt) for _, size, fmt in features], labels)
    print(f"\nstored originals: dimensions and format name the model of {accuracy:.1%} (chance {chance:.1%})")
    assert accuracy > 0.8 > 2 * chance
    flux = [stored[i] for i, model in models.items() if model == "flux-1-schnell"]
    with Image.open(media.path(*flux[0])) as image:
        assert image.size == (1024, 768) and b"FLUX.1-schnell".decode() in ImageCms.getProfileDescription(
            ImageCms.ImageCmsProfile(io.BytesIO(image.info["icc_profile"])))


@pytest.mark.slow
def test_the_page_and_the_reveal_preload_load_renditions(imported, imported_url):
    """Through the page's own API: the battle's two images and the next battle's preloaded ones (in the reveal) all
    load through the battle-media route, as renditions."""
    import re

    from gradio_client import Client

    settings, _ = imported
    url = imported_url
    client = Client(url, verbose=False)
    shown = client.predict("anonymity-voter", "a-long-enough-token", api_name="/sign_in")
    token = re.search(r"battle-media/([A-Za-z0-9_-]+)/a", str(shown)).group(1)
    voted = client.predict("All suites", False, token, api_name="/vote_a")
    sources = set(re.findall(r'src=\\?"(battle-media/[A-Za-z0-9_-]+/[ab])', str(shown) + str(voted)))
    assert len(sources) == 4  # A and B of the first battle, A and B of the next one (preloaded)
    with httpx.Client(timeout=30) as http:
        answers = [http.get(url + source) for source in sorted(sources)]
    assert {(a.status_code, a.headers["content-type"], a.headers["content-length"]) for a in answers} == {
        (200, "image/jpeg", str(settings.display_pad_bytes))}
    assert {_look(a.content)["size"] for a in answers} == {(768, 768)}


@pytest.mark.slow
def test_renditions_are_made_at_import_and_cached_in_the_media_folder(imported):
    from datamodel.renditions import RenditionSpec

    settings, models = imported
    spec = RenditionSpec.from_settings(settings)
    made = sorted((settings.media_dir / "renditions" / spec.key).rglob("*.jpg"))
    assert spec.key == "768x768-crop-jpeg-q85-pad262144-v2"
    assert len(made) == len(models) and {p.stat().st_size for p in made} == {262144}
    assert not list(settings.media_dir.rglob("*.tmp"))


def test_colours_reach_srgb_transparency_goes_grey_and_16_bits_are_scaled():
    from datamodel.renditions import RenditionSpec, render

    def centre(data: bytes, fit: str = "letterbox", at: tuple[int, int] = (32, 32)) -> tuple[int, ...]:
        with Image.open(io.BytesIO(render(data, RenditionSpec(size=64, pad_bytes=0, fit=fit)))) as image:
            pixel = image.convert("RGB").getpixel(at)
            assert isinstance(pixel, tuple)  # an RGB image's pixel is a tuple of its bands
            return pixel

    near = lambda got, want: max(abs(g - w) for g, w in zip(got, want)) <= 12  # noqa: E731  (JPEG at q85)
    red = Image.new("RGB", (40, 40), (255, 0, 0))
    assert near(centre(_encoded(red, "PNG")), (255, 0, 0))
    swapped = _encoded(red, "PNG", icc_profile=profile_bytes("swapped", swap_red_and_blue=True))
    assert near(centre(swapped), (0, 0, 255))  # the profile is applied: its "red" primary is sRGB blue
    assert near(centre(_encoded(Image.new("CMYK", (40, 40), (255, 0, 0, 0)), "JPEG")), (0, 255, 255))
    assert near(centre(_encoded(Image.new("RGBA", (40, 40), (255, 0, 0, 0)), "PNG")), (128, 128, 128))
    assert near(centre(_encoded(Image.new("I;16", (40, 40), 0x8080), "PNG")), (128, 128, 128))
    assert near(centre(_encoded(Image.new("P", (40, 40), 0), "PNG")), (0, 0, 0))
    wide = _encoded(Image.new("RGB", (80, 40), (255, 0, 0)), "PNG")
    assert near(centre(wide, at=(32, 4)), (128, 128, 128))  # letterboxed: grey bars above and below
    assert near(centre(wide, "crop", at=(32, 4)), (255, 0, 0))  # centre-cropped: no bars
    webp = RenditionSpec(size=64, aspect="4:3", format="webp", pad_bytes=0)
    with Image.open(io.BytesIO(render(wide, webp))) as image:
        assert (image.format, image.size, sorted(image.info)) == ("WEBP", (64, 48), ["background", "loop"])
    assert len(render(wide, RenditionSpec(size=64, pad_bytes=4096))) == 4096


def test_a_broken_rendition_setting_is_refused_with_its_variable():
    from core.settings import SettingsError

    for field, value, variable in (("display_fit", "stretch", "ARENA_DISPLAY_FIT"),
                                   ("display_aspect", "square", "ARENA_DISPLAY_ASPECT"),
                                   ("display_format", "png", "ARENA_DISPLAY_FORMAT"),
                                   ("display_quality", 100, "ARENA_DISPLAY_QUALITY"),
                                   ("display_size", 8, "ARENA_DISPLAY_SIZE"),
                                   ("display_pad_bytes", -1, "ARENA_DISPLAY_PAD_BYTES")):
        with pytest.raises(SettingsError, match=variable):
            Settings(**{field: value})


def _animated(format: str) -> bytes:
    frames = [Image.new("RGB", (32, 32), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    return _encoded(frames[0], format, save_all=True, append_images=frames[1:], duration=100, loop=0)


@pytest.mark.parametrize("name, data, message", [
    ("cat.gif", _animated("GIF"), r"cat\.gif: not an image file name; use \.png, \.jpg, \.jpeg or \.webp"),
    ("cat.png", _animated("GIF"), r"cat\.png: GIF images are not supported\. Convert it to PNG, JPEG or WebP"),
    ("cat.png", _animated("PNG"), r"cat\.png: animated images are not supported\. Export a single frame as PNG"),
    ("cat.webp", _animated("WEBP"), r"cat\.webp: animated images are not supported"),
])
def test_animated_images_are_refused_at_import_with_a_clear_message(tmp_path, name, data, message):
    (tmp_path / "prompts.csv").write_text("key,text\ncat,A cat\n")
    (tmp_path / "imgs" / "model").mkdir(parents=True)
    (tmp_path / "imgs" / "model" / name).write_bytes(data)
    db = connect(tmp_path / "a.db")
    with pytest.raises(ImageImportError, match=message):
        import_images(db, MediaStore(tmp_path / "media"), tmp_path / "imgs", tmp_path / "prompts.csv")
    assert db.execute("SELECT COUNT(*) FROM images").fetchone()[0] == 0


def test_chromium_shows_padded_renditions_of_both_formats(browser):
    """The zero padding after the image (JPEG: after its end marker; WebP: after its RIFF chunk) does not stop a
    browser from showing it: Chromium decodes both at the rendition's size and colours."""
    import base64

    from datamodel.renditions import RenditionSpec, render

    wide = _encoded(Image.new("RGB", (100, 50), (255, 0, 0)), "PNG")
    tags = ""
    for format, media_type in (("jpeg", "image/jpeg"), ("webp", "image/webp")):
        body = render(wide, RenditionSpec(size=64, fit="letterbox", format=format, pad_bytes=65536))
        assert len(body) == 65536 and body.endswith(bytes(1000))
        tags += f'<img id="{format}" src="data:{media_type};base64,{base64.b64encode(body).decode()}">'
    page = browser.new_page()
    page.set_content(tags, wait_until="load")
    for format in ("jpeg", "webp"):
        shown = page.evaluate("""(id) => { const image = document.getElementById(id);
            const canvas = document.createElement('canvas'); canvas.width = 64; canvas.height = 64;
            const context = canvas.getContext('2d'); context.drawImage(image, 0, 0);
            const pixel = (x, y) => Array.from(context.getImageData(x, y, 1, 1).data);
            return [image.naturalWidth, image.naturalHeight, pixel(32, 32), pixel(32, 2)]; }""", format)
        width, height, centre, bar = shown
        assert (width, height) == (64, 64), format
        assert max(abs(a - b) for a, b in zip(centre, (255, 0, 0, 255))) <= 12, (format, centre)
        assert max(abs(a - b) for a, b in zip(bar, (128, 128, 128, 255))) <= 12, (format, bar)
