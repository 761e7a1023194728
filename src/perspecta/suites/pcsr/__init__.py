"""PCSR-Bench: perspective-conditioned spatial reasoning on 360° room panoramas
(shared/papers/pcsr-bench.txt, sections 3-5).

Eight tasks (T0-T7) on furnished rooms rendered as 1024x512 equirect panoramas, each
unit one panorama with an open-ended (or yes/no) item and a hard-distractor MCQ item;
strict/relaxed scoring (:mod:`.scoring`) and GRPO reward functions (:mod:`.rewards`).
Difficulty knobs and presets: docs/suites.md (PCSR section); ``audit_features`` feeds
the shortcut audit.
"""

from perspecta.suites.pcsr import panoramic, perception, reasoning, scoring  # noqa: F401  (registers tasks)
from perspecta.suites.pcsr import rewards as _rewards  # noqa: E402
from perspecta.suites.pcsr.training import TRAINING_PRESETS  # noqa: E402,F401  (perspecta train presets)

# GRPO (perspecta train grpo): the paper's own rewards replace the generic ones, and the
# questions already carry the think/answer instruction, so they are sent as they are
GRPO_REWARDS = {"accuracy": _rewards.accuracy_reward, "format": _rewards.format_reward,
                "reasoning": _rewards.reasoning_reward}
GRPO_PROMPT_MODE = "direct"

# Default longest image side `perspecta eval` sends (None = native), after the paper's
# protocol; `--image-max-side N` / `--high-res` override it.
# PCSR: the 1024x512 panoramas at native resolution (at 256x128 a 250-pixel
# object would shrink to ~16 pixels).
EVAL_IMAGE_MAX_SIDE: int | None = None
from perspecta.suites.pcsr.audit import audit_features  # noqa: F401  (suite setting read by the audit)

# the difficulty presets every knob of the suite reads (see docs/suites.md)
DIFFICULTY_PRESETS = ("easy", "standard", "hard")
