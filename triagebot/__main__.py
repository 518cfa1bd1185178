"""``python -m triagebot``: the same command line as the ``triagebot`` script."""
from triagebot.cli.main import main

raise SystemExit(main())
