"""``python -m ecnlab.emulate``: the command, and the agent and reaper processes it starts."""

import sys

from .command import main

sys.exit(main())
