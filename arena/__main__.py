import sys

from arena.cli import main

sys.exit(main())
