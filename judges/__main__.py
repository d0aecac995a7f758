import sys

from judges.cli import main

sys.exit(main())
