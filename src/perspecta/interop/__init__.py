"""Interop with other tools: exports to Hugging Face ``datasets``, VLMEvalKit, lmms-eval,
SpinBench JSONL and TRL (SFT / GRPO), and imports of their prediction files.

Heavy dependencies (``datasets``, ``pandas``, ``trl``) are imported inside the functions
that need them, so ``import perspecta.interop`` stays cheap. See ``docs/interop.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

EXPORT_FORMATS = ("hf", "vlmevalkit", "lmms-eval", "spinbench", "sft")


def export(dataset: str | Path, to: str, out: str | Path, *, split: str = "test") -> dict[str, Any]:
    """Export ``dataset`` to format ``to`` under ``out``; return what was written (counts, paths).

    ``split`` applies to the evaluation formats (vlmevalkit, lmms-eval); ``hf`` writes every
    split, ``sft`` always the train split, ``spinbench`` every spin item.
    """
    if to == "hf":
        from perspecta.interop.export_hf import export_hf

        return export_hf(dataset, out)
    if to == "vlmevalkit":
        from perspecta.interop.export_vlmevalkit import export_vlmevalkit

        return export_vlmevalkit(dataset, out, split=split)
    if to == "lmms-eval":
        from perspecta.interop.export_lmms_eval import export_lmms_eval

        return export_lmms_eval(dataset, out, split=split)
    if to == "spinbench":
        from perspecta.suites.spin.export import export_spinbench

        return {"items": export_spinbench(dataset, out), "path": str(out)}
    if to == "sft":
        from perspecta.interop.export_sft import export_sft

        return export_sft(dataset, out)
    raise ValueError(f"unknown export format {to!r}; choose from {', '.join(EXPORT_FORMATS)}")
