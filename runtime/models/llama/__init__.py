"""The llama backend: a GGUF in this process, loaded the one way this machine survives."""

__all__: list[str] = []
