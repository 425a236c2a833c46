"""A new user's first week in one home, `loci bench first-week`: memory, chats on files and a digest, beside
plain retrieval on the same model.
"""

__all__: list[str] = []
