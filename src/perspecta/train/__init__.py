"""Training recipes from the papers (``perspecta train sft|grpo``): presets, TRL wiring, records."""
