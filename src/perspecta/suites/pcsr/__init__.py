"""PCSR-Bench: perspective-conditioned spatial reasoning on 360° room panoramas
(shared/papers/pcsr-bench.txt, sections 3-5).

Eight tasks (T0-T7) on furnished rooms rendered as 1024x512 equirect panoramas, each
unit one panorama with an open-ended (or yes/no) item and a hard-distractor MCQ item;
strict/relaxed scoring (:mod:`.scoring`) and GRPO reward functions (:mod:`.rewards`).
"""

from perspecta.suites.pcsr import panoramic, perception, reasoning, scoring  # noqa: F401  (registers tasks)
from perspecta.suites.pcsr import rewards as _rewards  # noqa: E402
from perspecta.suites.pcsr.training import TRAINING_PRESETS  # noqa: E402,F401  (perspecta train presets)

# GRPO (perspecta train grpo): the paper's own rewards replace the generic ones, and the
# questions already carry the think/answer instruction, so they are sent as they are
GRPO_REWARDS = {"accuracy": _rewards.accuracy_reward, "format": _rewards.format_reward,
                "reasoning": _rewards.reasoning_reward}
GRPO_PROMPT_MODE = "direct"
