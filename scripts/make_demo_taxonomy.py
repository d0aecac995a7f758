"""Write suites/data/demo_taxonomy.json, the demo's WordNet concepts, from WordNet.

    .venv/bin/python scripts/make_demo_taxonomy.py [--cache-dir .cache] [--wordnet-dir /usr/share/wordnet]

The concepts are ``suites.taxonomy.DEMO_SYNSETS``; tests check the file still matches WordNet.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.settings import load_settings  # noqa: E402
from suites.taxonomy import DEMO_FILE, demo_concepts_from_wordnet  # noqa: E402
from suites.wordnet import load_wordnet, wordnet_dir_from  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    settings = load_settings()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=settings.cache_dir)
    parser.add_argument("--wordnet-dir", type=Path, default=wordnet_dir_from(settings))
    parser.add_argument("--output", type=Path, default=DEMO_FILE)
    args = parser.parse_args(argv)
    concepts = demo_concepts_from_wordnet(load_wordnet(args.cache_dir, args.wordnet_dir))
    records = [concept.record() for concept in concepts]
    args.output.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"Wrote {len(records)} concepts to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
