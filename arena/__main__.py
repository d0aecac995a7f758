import sys

from arena.commands import main

sys.exit(main())
