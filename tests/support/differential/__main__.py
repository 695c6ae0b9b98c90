"""`python -m tests.support.differential`: see the package's docstring."""

import sys

from . import main

sys.exit(main())
