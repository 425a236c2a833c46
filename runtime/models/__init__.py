"""Model backends behind one protocol: specs, the scripted model, the openai and llama backends, tokens, embedders."""

__all__: list[str] = []
