"""Long-document jobs (`loci digest`): inputs, chunks, strategies, progress, batches and the MCP tool."""

__all__: list[str] = []
