"""What a coding agent's hooks run: recall into the prompt, capture of the transcript, and their log."""

__all__: list[str] = []
