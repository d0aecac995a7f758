import sys

from generators.cli import main

sys.exit(main())
