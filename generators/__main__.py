import sys

from generators.commands import main

sys.exit(main())
