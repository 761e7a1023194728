"""Scoring: answer extraction, scored records and the metrics each suite registers."""
