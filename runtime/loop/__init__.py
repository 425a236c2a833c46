"""The turn loop: the agent, its plan and state, a turn's rules and decision, actions, guards, recursion."""

__all__: list[str] = []
