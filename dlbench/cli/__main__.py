"""`python -m dlbench.cli`: the same as the `dlbench` console script."""

import sys

from dlbench.cli import main

sys.exit(main())
