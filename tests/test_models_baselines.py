"""Baselines on a generated DORI dataset: the oracle scores 100% (answer keys + extraction
self-check), chance sits near 1/#options, prior follows the train split, blind drops images."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.dataset.item import Item, letter_options
from perspecta.models.base import BackendError, Request, Response
from perspecta.models.baselines import BlindBackend, ChanceBackend, PriorBackend
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
    with pytest.raises(BackendError, match="undefined for open-ended"):
        op = Item(id="o", suite="x", task="t", question="Q", images=[], answer_type="open", answer="3")
        asyncio.run(backend.generate(Request(op, "Q", [])))


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
    prior = PriorBackend(train + test, test)
    assert prior.source == "train"
    assert asyncio.run(prior.generate(Request(test[0], "Q", []))).text == "<answer>C</answer>"


def test_prior_without_train_split_is_the_in_sample_majority() -> None:
    # answers A, A, B: the majority text is opt0 (label A) for every item, the B item included
    items = [_mcq(i, 2, answer=a) for i, a in enumerate("AAB")]
    prior = PriorBackend(items, items)
    assert prior.source == "in-sample"
    got = [asyncio.run(prior.generate(Request(it, "Q", []))).text for it in items]
    assert got == ["<answer>A</answer>"] * 3
    # a perfectly balanced task ties; the tie is broken by text, never by the item itself
    balanced = [_mcq(i, 2, answer=a) for i, a in enumerate("AB")]
    got = [asyncio.run(PriorBackend(balanced, balanced).generate(Request(it, "Q", []))).text for it in balanced]
    assert got == ["<answer>A</answer>"] * 2


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
