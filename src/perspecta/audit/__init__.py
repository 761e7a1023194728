"""Shortcut audit: what a model could score on each task without the skill it names.

``perspecta audit DATASET`` (:mod:`perspecta.cli_audit`) runs :func:`perspecta.audit.core.audit_dataset`;
see docs/audit.md. This module stays import-light: the report imports the file name from it.
"""

AUDIT_FILE = "audit.json"  # inside a dataset directory: where `perspecta run` writes it and the report looks
