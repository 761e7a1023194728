"""PCSR-Bench: perspective-conditioned spatial reasoning on 360° room panoramas
(shared/papers/pcsr-bench.txt, sections 3-5).

Eight tasks (T0-T7) on furnished rooms rendered as 1024x512 equirect panoramas, each
unit one panorama with an open-ended (or yes/no) item and a hard-distractor MCQ item;
strict/relaxed scoring (:mod:`.scoring`) and GRPO reward functions (:mod:`.rewards`).
Difficulty knobs and presets: docs/suites.md (PCSR section); ``audit_features`` feeds
the shortcut audit.
"""

from perspecta.suites.pcsr import panoramic, perception, reasoning, scoring  # noqa: F401  (registers tasks)
from perspecta.suites.pcsr.audit import audit_features  # noqa: F401  (suite setting read by the audit)

# the difficulty presets every knob of the suite reads (see docs/suites.md)
DIFFICULTY_PRESETS = ("easy", "standard", "hard")
