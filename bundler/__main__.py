"""`python -m bundler` is the `bundler` command."""

import sys

from bundler.cli import main

sys.exit(main())
