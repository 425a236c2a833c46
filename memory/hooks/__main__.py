"""The hook process: `python -m loci.memory.hooks recall|capture [--db PATH] [--project P]`, the event's JSON on stdin.

See memory/hooks/run.py. `loci hook` and the rest of Loci import that module, not this one.
"""

import sys

__all__: list[str] = []

if __name__ == "__main__":
    from loci.memory.hooks.run import main

    sys.exit(main())
