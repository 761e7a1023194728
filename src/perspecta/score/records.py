"""The scored record: one model response to one item, as one line of ``results.jsonl``.

Every analysis (accuracy, Cohen's kappa, consistency, soft accuracy, LRR score,
strict/relaxed) reads only these records, so predictions made by other tools
(lmms-eval, VLMEvalKit) become first-class once converted into them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["ok", "unparsed", "failed"]


@dataclass
class ScoredRecord:
    item_id: str
    suite: str
    task: str
    model: str  # "<backend>:<name>", e.g. "openai:qwen2.5-vl-7b", "baseline:chance"
    answer: str  # the gold answer (option label, yes/no, or canonical open answer)
    status: Status  # ok = an answer was extracted; unparsed = response had none; failed = no response
    prediction: str | None = None  # the extracted answer (None unless status == "ok")
    correct: bool | None = None  # None only when status == "failed"
    response: str | None = None  # raw model text (None when failed)
    error: str | None = None  # why it failed (HTTP status, timeout, ...)
    subtype: str = ""
    granularity: str | None = None
    variant: str = "base"
    group: str = ""
    split: str = "test"
    answer_type: str = "mcq"
    n_options: int = 0
    prompt_mode: str = "direct"  # direct | cot | think
    repeat: int = 0  # repeat index (different sampling seeds)
    metadata: dict[str, Any] = field(default_factory=dict)  # the item's metadata (factors)
    scores: dict[str, float] = field(default_factory=dict)  # extra per-record scores (soft, relaxed, ...)
    latency_s: float | None = None
    dataset: str = ""  # fingerprint of the dataset evaluated (manifest checksum); "" when unknown

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScoredRecord:
        known = _FIELDS
        if d.keys() <= known:  # the usual line: no filtering copy (a third of reading 1M records)
            return cls(**d)
        return cls(**{k: v for k, v in d.items() if k in known})


_FIELDS = frozenset(ScoredRecord.__dataclass_fields__)
