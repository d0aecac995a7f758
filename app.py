"""Start the arena web app: ``python app.py`` (same as ``python -m arena serve``). Settings: docs/reference/settings.md.

Hugging Face Spaces start the app this way: it listens on GRADIO_SERVER_NAME/GRADIO_SERVER_PORT, which Spaces set
(ARENA_HOST/ARENA_PORT win over them), and keeps the database and media in /data when persistent storage is on.
"""

import sys

from arena.commands import main

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
