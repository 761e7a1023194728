"""The pcsr suite (being implemented; registers no tasks yet)."""
