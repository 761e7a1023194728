"""Shortcut audit: what a model could score on each task without the skill it names."""
