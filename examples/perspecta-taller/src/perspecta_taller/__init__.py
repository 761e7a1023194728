"""An example perspecta suite: which of two objects is taller (see README.md).

Importing the package registers its task; :mod:`.spec` declares the suite.
"""

from perspecta_taller import task  # noqa: F401  (registers taller/which_taller)
