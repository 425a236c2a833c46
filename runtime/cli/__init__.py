"""`loci`: the command line, one module a command."""

__all__: list[str] = []
