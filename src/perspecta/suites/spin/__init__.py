"""The spin suite (being implemented; registers no tasks yet)."""
