"""`python -m bench` (and `make bench`): see bench.harness."""

import sys

from bench.harness import main

if __name__ == "__main__":
    sys.exit(main())
