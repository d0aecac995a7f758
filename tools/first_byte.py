"""Does the time to the first byte of a battle image name its model? (issue 23, finding 1)

Builds an arena of four models whose originals differ in native size (64, 512, 1024 and 2048 px PNGs), added the
low-level way (``datamodel.catalog.add_image``, as a script or a generator run does), starts the app in this process
as ``serve`` does, and asks for both images of fresh battles once each, timing the first byte. Prints how often the
slower of the two answers was the larger original (chance: 50%) and how often the first-byte time alone, split at
its median, names the model's size class (chance: 50%).

Run from the checkout to measure: ``python -m tools.first_byte`` here, or ``cd OTHER && python
/path/to/tools/first_byte.py`` to measure another version the same way (the script only uses what both have).
Timings are disturbed by other load on the machine; the slower-side count is what to compare.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

SIDES = (64, 512, 1024, 2048)


def picture(side: int, seed: int):
    """A smooth background, coloured discs and a little grain: about what a generated image holds (pure noise would
    make renditions longer than one padding block, a length difference that is not the timing measured here)."""
    from PIL import Image, ImageDraw, ImageFilter

    rng = random.Random(seed)
    image = Image.linear_gradient("L").rotate(rng.randrange(360)).resize((side, side)).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(30):
        x, y, r = rng.randrange(side), rng.randrange(side), rng.randrange(max(2, side // 30), max(3, side // 5))
        draw.ellipse([x - r, y - r, x + r, y + r], fill=tuple(rng.randrange(256) for _ in range(3)))
    grain = Image.effect_noise((side, side), 24).convert("RGB")
    return Image.blend(image.filter(ImageFilter.GaussianBlur(side / 300)), grain, 0.1)


def build(root: Path, prompts: int):
    """The arena: ``prompts`` prompts, one PNG per model and prompt; {image id: native side}."""
    from core.settings import Settings
    from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
    from datamodel.connection import connect
    from datamodel.media import MediaStore

    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache", demo=False,
                        host="127.0.0.1")
    db, media = connect(settings.db_path), MediaStore(settings.media_dir)
    ids = add_prompts(db, [PromptSpec("bench", f"k{i}", f"thing {i}") for i in range(prompts)]).ids
    sides = {}
    for side in SIDES:
        model_id = add_model(db, f"model-{side}px")
        for p, prompt_id in enumerate(ids):
            image = picture(side, 1000 * side + p)
            sides[add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(image))] = side
    db.close()
    return settings, sides


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.first_byte", description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=40, help="fresh battles to time (default 40)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path.cwd()))
    import httpx
    import uvicorn

    from arena.web.app import create_server, server_config
    from datamodel.connection import connect
    from sampling.draws import serve_battle
    from tools.load import free_port

    root = Path(tempfile.mkdtemp(prefix="first-byte-"))
    settings, sides = build(root, prompts=args.battles)
    settings = settings.replace(port=free_port())
    server = uvicorn.Server(server_config(settings, create_server(settings)))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{settings.port}/"
    db, rng = connect(settings.db_path), random.Random(0)
    times, slower_larger, decided = [], 0, 0
    try:
        with httpx.Client(timeout=120) as http:
            for i in range(args.battles):
                battle = serve_battle(db, rng, session_id=f"first-byte-{i}", judge="first-byte")
                pair = []
                for side, image in (("a", battle.left.image_id), ("b", battle.right.image_id)):
                    started = time.perf_counter()
                    with http.stream("GET", f"{url}battle-media/{battle.media_token}/{side}") as answer:
                        next(answer.iter_raw(1), None)
                        pair.append((time.perf_counter() - started, sides[image]))
                        times.append(pair[-1])
                (time_a, side_a), (time_b, side_b) = pair
                if side_a != side_b:
                    decided += 1
                    slower_larger += (time_a > time_b) == (side_a > side_b)
    finally:
        server.should_exit = True
        db.close()
        shutil.rmtree(root, ignore_errors=True)
    split = statistics.median(t for t, _ in times)
    large = statistics.median(SIDES)
    named = sum((t > split) == (side > large) for t, side in times)
    print(f"first byte of {len(times)} fresh images ({', '.join(f'{s} px' for s in SIDES)} originals): median "
          f"{1000 * split:.1f} ms; the slower of the two sides was the larger original in {slower_larger} of "
          f"{decided} battles (chance 50%); slow/fast at the median named small/large originals for {named} of "
          f"{len(times)} images (chance 50%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
