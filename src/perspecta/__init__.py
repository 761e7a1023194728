"""Perspecta: spatial-reasoning benchmarks for VLMs from exact 3D ground truth."""

__version__ = "0.1.0"
