"""Remake the demo bundle (``arena/demo/bundle/``): ``python -m tools.demo_bundle``, from a checkout, after a change
to a demo painter, the demo prompts or a demo metric, like the other commands here that remake a checked-in file. The
code is :mod:`arena.demo.making`; this is its command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arena.demo import making
from arena.demo.seeding import DEMO_BUNDLE
from core.extras import MissingExtra, exit_status, require


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.demo_bundle", description=making.__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEMO_BUNDLE, help=f"bundle folder (default: {DEMO_BUNDLE})")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the images and the metrics (default 0)")
    parser.add_argument("--cache-dir", type=Path, help="model cache whose tiny pipelines and demo CLIP are used "
                        "(default: a throwaway folder; see arena/demo/making.py)")
    args = parser.parse_args(argv)
    try:
        require("torch", "diffusers", "transformers", "open_clip", command="python -m tools.demo_bundle")
    except MissingExtra as missing:
        return exit_status(missing, "python -m tools.demo_bundle")
    try:
        figures = making.make_bundle(args.out, seed=args.seed, progress=True, cache_dir=args.cache_dir)
    except making.DemoClipCutShort as error:
        print(f"python -m tools.demo_bundle: {error}", file=sys.stderr)
        return 1
    print(f"Wrote {args.out}: {figures['images']} images, {figures['metrics']} metric rows, "
          f"{figures['bytes'] / 1e6:.2f} MB in {figures['seconds']:.0f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
