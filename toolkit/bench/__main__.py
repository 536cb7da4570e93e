"""`python -m toolkit.bench`: the query benchmark."""

import sys

from .query import main

sys.exit(main())
