"""DORI: object-orientation reasoning (shared/papers/dori.txt).

Each task asks a coarse (categorical) and a granular (angular) question about the
same rendered image, with the paper's five-part structured prompt and a "Cannot be
determined" option that is the right answer for objects without a front.
"""

from perspecta.suites.dori import view_parallelism  # noqa: F401  (registers tasks)
