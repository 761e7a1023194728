"""The lrr suite (being implemented; registers no tasks yet)."""
