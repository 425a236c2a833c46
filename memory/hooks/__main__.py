"""The hook process: `python -m memory.hooks recall|capture [--db PATH]`, the event's JSON on stdin.

sqlite-utils imports numpy (and pandas) when they are installed, for column
types this process never writes; a hook's start is on the client's critical
path, so this entry point tells Python they are absent before anything else
is imported. Only this process: `loci hook` and the rest of Loci import
memory/hooks/run.py, not this module.
"""

import sys

__all__: list[str] = []

if __name__ == "__main__":
    for _name in ("numpy", "pandas"):
        sys.modules.setdefault(_name, None)  # type: ignore[assignment]

    from memory.hooks.run import main

    sys.exit(main())
