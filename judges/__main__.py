import sys

from judges.commands import main

sys.exit(main())
