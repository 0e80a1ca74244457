"""``python -m evalcore.cli``: the same as the ``evalcore`` console script."""

from . import main

raise SystemExit(main())
