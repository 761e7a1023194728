"""``--model`` specs to backends: ``openai:NAME``, ``hf:PATH``, ``baseline:chance|prior|oracle``,
``blind:<text backend spec>`` (e.g. ``blind:openai:NAME``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perspecta.models.base import Backend

if TYPE_CHECKING:
    from perspecta.run.dataset import EvalDataset

BASELINES = ("chance", "prior", "oracle")


def make_backend(spec: str, *, dataset: EvalDataset | None = None, eval_items: list | None = None,
                 base_url: str | None = None, api_key: str | None = None, seed: int = 0,
                 connections: int = 256, prior_reference_dir: Any = None, **hf_kwargs: Any) -> Backend:
    kind, _, rest = spec.partition(":")
    if not rest:
        raise ValueError(f"--model {spec!r}: expected KIND:NAME, e.g. openai:qwen2.5-vl-7b, hf:/path, baseline:chance")
    if kind == "openai":
        from perspecta.models.openai_http import OpenAIBackend

        return OpenAIBackend(rest, base_url=base_url, api_key=api_key, connections=connections)
    if kind == "hf":
        from pathlib import Path

        from perspecta.models.hf import HFBackend

        if rest.startswith(("/", ".", "~")) and not Path(rest).expanduser().exists():
            raise ValueError(f"--model {spec}: no model directory at {rest}")

        return HFBackend(rest, **hf_kwargs)
    if kind == "blind":
        from perspecta.models.baselines import BlindBackend

        return BlindBackend(make_backend(rest, dataset=dataset, base_url=base_url, api_key=api_key, seed=seed,
                                         connections=connections, **hf_kwargs))
    if kind == "baseline":
        from perspecta.models import baselines as b

        if rest == "chance":
            return b.ChanceBackend(seed=seed)
        if rest == "blind":
            raise ValueError("the blind baseline needs a text backend to send prompts to: use blind:openai:NAME "
                             "or blind:hf:PATH")
        if dataset is None:
            raise ValueError(f"baseline:{rest} needs the dataset")
        if rest == "prior":
            return b.PriorBackend.for_dataset(dataset, eval_items if eval_items is not None else
                                              dataset.select(split="test"), prior_reference_dir)
        if rest == "oracle":
            return b.OracleBackend(dataset.scenes)
        raise ValueError(f"unknown baseline {rest!r}; choose from {', '.join(BASELINES)} (or blind:<backend>)")
    raise ValueError(f"--model {spec!r}: unknown backend kind {kind!r} (openai, hf, baseline, blind)")
