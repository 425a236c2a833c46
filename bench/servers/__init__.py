"""The processes Loci starts for others, timed as they run: `loci serve` (`mcp`, `memory-peer`, `team`,
`sessions`, `live`), `loci ui`, the hooks and the CLI's start, with the CPU meters and the PostgreSQL cluster
they use.
"""

__all__: list[str] = []
