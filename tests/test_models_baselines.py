"""Baselines on a generated DORI dataset: the oracle scores 100% (answer keys + extraction
self-check), chance sits near 1/#options, prior follows the train split, blind drops images."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.dataset.item import Item, letter_options
from perspecta.models.base import BackendError, Request, Response
from perspecta.models.baselines import REFERENCE_SEED_OFFSET, BlindBackend, ChanceBackend, PriorBackend, _answer_key
from perspecta.run import evaluate
from perspecta.run.dataset import load_dataset
from perspecta.score.metrics import summarize


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.getbasetemp() / "perspecta-eval-dori-n3-seed11"
    if not (out / "manifest.json").exists():
        generate_dataset(out, GenerationConfig(suites=["dori"], n=3, seed=11))
    return out


def test_oracle_scores_100_percent_on_every_dori_task(dataset: Path, tmp_path: Path) -> None:
    res = evaluate(dataset, "baseline:oracle", tmp_path, progress=False)
    run = summarize(res.records())["runs"][0]
    assert run["n"] == len(load_dataset(dataset).items) and run["failed"] == 0 and run["unparsed"] == 0
    assert run["accuracy"] == 1.0
    assert len(run["by_task"]) == 7 and all(b["accuracy"] == 1.0 for b in run["by_task"].values())


def _mcq(i: int, n_options: int, answer: str = "A", split: str = "test", subtype: str = "s") -> Item:
    texts = [f"opt{k}" for k in range(n_options)]
    return Item(id=f"x/t/base/{i:06d}", suite="x", task="t", question="Q", images=[], answer_type="mcq",
                answer=answer, options=letter_options(texts), split=split, subtype=subtype)  # type: ignore[arg-type]


def test_chance_is_uniform_and_seeded() -> None:
    backend = ChanceBackend(seed=7)

    async def answers(items: list[Item]) -> list[str]:
        return [(await backend.generate(Request(it, "Q", []))).text for it in items]

    items = [_mcq(i, 4) for i in range(2000)]
    got = asyncio.run(answers(items))
    counts = Counter(got)
    assert set(counts) == {f"<answer>{c}</answer>" for c in "ABCD"}
    assert all(abs(c / 2000 - 0.25) < 0.04 for c in counts.values())  # ~0.25 each (sd ~0.01)
    assert asyncio.run(answers(items[:50])) == got[:50]  # same seed, same answers
    yn = Item(id="y", suite="x", task="t", question="Q", images=[], answer_type="yesno", answer="yes")
    assert asyncio.run(backend.generate(Request(yn, "Q", []))).text in ("<answer>yes</answer>", "<answer>no</answer>")
    with pytest.raises(BackendError, match="undefined for an open-ended item with no"):
        op = Item(id="o", suite="x", task="t", question="Q", images=[], answer_type="open", answer="3")
        asyncio.run(backend.generate(Request(op, "Q", [])))
    # an open item that declares its answer space: uniform over it, never outside it
    names = ["sofa", "washing machine", "plant"]
    opens = [Item(id=f"o{i}", suite="x", task="t", question="Q", images=[], answer_type="open", answer="plant",
                  metadata={"candidates": names}) for i in range(900)]
    got_open = Counter(asyncio.run(answers(opens)))
    assert set(got_open) == {f"<answer>{n}</answer>" for n in names}
    assert all(abs(c / 900 - 1 / 3) < 0.06 for c in got_open.values())


def test_chance_accuracy_on_dori_near_one_over_options(dataset: Path, tmp_path: Path) -> None:
    accs, chance = [], []
    for seed in range(6):  # several seeds: 42 items alone are a noisy estimate
        res = evaluate(dataset, "baseline:chance", tmp_path / str(seed), seed=seed, progress=False)
        run = summarize(res.records())["runs"][0]
        accs.append(run["accuracy"])
        chance.append(run["chance_level"])
    assert run["failed"] == 0 and run["unparsed"] == 0
    # expected accuracy = mean over items of 1/#options; 6 x 42 draws, sd ~ 0.027
    assert abs(float(np.mean(accs)) - chance[0]) < 0.09


def test_prior_uses_train_split_by_option_text() -> None:
    # train answers by text: opt2 x3, opt0 x1 -> the prior answers the option whose text is opt2
    train = [_mcq(i, 3, answer=a, split="train") for i, a in enumerate("CCCA")]
    test = [_mcq(10, 3, answer="B")]
    prior = PriorBackend(train, {"kind": "train split"})
    assert asyncio.run(prior.generate(Request(test[0], "Q", []))).text == "<answer>C</answer>"


def test_prior_never_learns_from_the_items_it_is_scored_on(dataset: Path, tmp_path: Path) -> None:
    """Without a train split the prior comes from a reference draw (another seed, no shared item),
    recorded in the run file; it is never the in-sample majority."""
    res = evaluate(dataset, "baseline:prior", tmp_path / "r", progress=False)
    run = json.loads((tmp_path / "r" / "run-baseline_prior.json").read_text())
    src = run["prior_source"]
    assert src["kind"] == "reference draw" and src["seed"] == 11 + REFERENCE_SEED_OFFSET
    ref = load_dataset(src["dataset"])
    evaluated = load_dataset(dataset)
    assert not {it.id + str(it.seed) for it in ref.items} & {it.id + str(it.seed) for it in evaluated.items}
    assert {it.task for it in ref.items} == {it.task for it in evaluated.items}
    # each of the prior's answers is the reference majority of its subtype, not the evaluated one
    by_sub: dict[str, Counter] = {}
    for it in ref.items:
        by_sub.setdefault(f"{it.task}/{it.subtype}", Counter())[_answer_key(it)] += 1
    for rec in res.records():
        item = next(it for it in evaluated.items if it.id == rec.item_id)
        counts = by_sub[f"{item.task}/{item.subtype}"]
        texts = {(o.text or o.label): o.label for o in item.options}
        ranked = [k for k in sorted(counts, key=lambda k: (-counts[k], k)) if k in texts]
        assert rec.status == "ok"  # every item answered: by text, else the reference's likeliest label
        if ranked:
            assert rec.prediction == texts[ranked[0]]
    with pytest.raises(ValueError, match="train split"):  # no silent in-sample fallback
        PriorBackend.for_dataset(evaluated, evaluated.items, None)


def test_blind_sends_the_prompt_without_images() -> None:
    seen: list[Request] = []

    class TextModel:
        name = "echo"

        async def generate(self, request: Request) -> Response:
            seen.append(request)
            return Response("<answer>A</answer>")

        async def aclose(self) -> None:
            return None

    blind = BlindBackend(TextModel())
    item = _mcq(0, 2)
    asyncio.run(blind.generate(Request(item, "<image>\nTASK: which?\nsee <image> here", [Path("a.png"), Path("b.png")])))
    assert blind.name == "blind:echo"
    assert seen[0].images == [] and "<image>" not in seen[0].prompt
    assert seen[0].prompt == "TASK: which?\nsee  here"


def test_prior_reference_draw_failure_is_one_clear_line(dataset: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference draw whose generation stops (a unit no layout satisfies) used to end
    `perspecta eval --model baseline:prior` in a traceback; it is now a ValueError naming
    the draw and what to do, which the CLI prints as one line."""
    from perspecta.dataset import generate as gen
    from perspecta.models import baselines

    def stops(*args: object, **kwargs: object) -> None:
        raise gen.UnitFailed("lrr/ca_m unit 0: SamplingError: lrr ca_m: no valid layout after 200 attempts")

    monkeypatch.setattr(gen, "generate_dataset", stops)
    with pytest.raises(ValueError, match="reference draw .* stopped: lrr/ca_m unit 0"):
        baselines.reference_draw(dataset, tmp_path / "ref")
