"""Scaling out: dataset output on any fsspec URL, and Ray executors for ``generate`` and ``eval``.

Nothing here imports Ray at module level: the local path (``perspecta generate`` with
the default executor) must work, and ``import perspecta`` must stay light, without the
``perspecta[ray]`` extra installed.
"""
