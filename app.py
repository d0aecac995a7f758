"""Start the arena web app: ``python app.py`` (same as ``python -m arena serve``). Settings: see README."""

import sys

from arena.commands import main

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
