"""Exports load with their consumers' own code; imported predictions score like our runner.

Consumers here: Hugging Face ``datasets`` (interop extra) for the hf export, TRL's own
message preparation for the SFT export, pandas (VLMEvalKit's TSV reader) for the TSVs.
lmms-eval and VLMEvalKit themselves run in their own venvs: benchmarks/interop/.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets", reason="needs the interop extra")
pd = pytest.importorskip("pandas")

from perspecta.interop import export
from perspecta.interop.import_predictions import PredictionFileError, import_predictions
from perspecta.run import evaluate
from perspecta.run.dataset import load_dataset as load_eval_dataset
from perspecta.score.metrics import read_records, summarize

TASKS = ["dori/directional_facing", "spin/identity_matching", "pcsr/counting", "lrr/pos"]


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory) -> Path:
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    out = tmp_path_factory.mktemp("interop") / "ds"
    generate_dataset(out, GenerationConfig(suites=["dori", "spin", "pcsr", "lrr"], n=3, seed=0, tasks=TASKS,
                                           splits={"train": 0.5, "test": 0.5}))
    return out


def test_hf_export_loads_with_datasets_and_is_deterministic(dataset_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    a = export(dataset_dir, "hf", tmp_path / "a")
    export(dataset_dir, "hf", tmp_path / "b")
    for split in a["splits"]:
        assert (tmp_path / "a/data" / f"{split}.parquet").read_bytes() == (tmp_path / "b/data" / f"{split}.parquet").read_bytes()
    loaded = datasets.load_dataset("parquet", data_files={"test": str(tmp_path / "a/data/test.parquet")},
                                   cache_dir=str(tmp_path / "cache"))["test"]
    items = {it.id: it for it in load_eval_dataset(dataset_dir).items}
    assert len(loaded) == a["splits"]["test"] == sum(it.split == "test" for it in items.values())
    for row in loaded:
        item = items[row["id"]]
        assert len(row["images"]) == len(item.images) and row["images"][0].size[0] > 0
        assert [o["label"] for o in row["options"]] == [o.label for o in item.options]
        assert json.loads(row["metadata"]) == json.loads(json.dumps(item.metadata))
        assert "<image>" not in row["prompt_text"] and row["answer"] == item.answer
    train = datasets.load_dataset("parquet", data_files={"train": str(tmp_path / "a/data/train.parquet")},
                                  cache_dir=str(tmp_path / "cache"))["train"]
    multi = [r for r in [*loaded, *train] if len(r["images"]) > 1]
    assert multi and all(len(r["images"]) == len(items[r["id"]].images) for r in multi)
    card = datasets.load_dataset(str(tmp_path / "a"), cache_dir=str(tmp_path / "cache2"))
    assert set(card) == set(a["splits"])


def test_vlmevalkit_tsvs_match_its_loader_conventions(dataset_dir: Path, tmp_path: Path) -> None:
    result = export(dataset_dir, "vlmevalkit", tmp_path)
    config = json.loads((tmp_path / "vlmevalkit_data_config.json").read_text())
    assert set(config) == set(result["files"])
    mcq = pd.read_csv(tmp_path / "Perspecta_ds_MCQ.tsv", sep="\t")
    assert {"index", "image", "question", "A", "B", "answer", "category", "l2-category", "split", "id"} <= set(mcq)
    assert set(mcq["answer"]) <= set("ABCDEFGHIJ")
    test_indexes = list(mcq["index"])
    export(dataset_dir, "vlmevalkit", tmp_path / "train", split="train")
    mcq = pd.concat([mcq, pd.read_csv(tmp_path / "train/Perspecta_ds_MCQ.tsv", sep="\t")])
    multi = mcq[mcq["image"].str.startswith("[")]
    assert len(multi) > 0  # spin identity matching has 3 images
    for _, row in multi.iterrows():  # VLMEvalKit's toliststr evaluates this string
        images, names = ast.literal_eval(row["image"]), ast.literal_eval(row["image_path"])
        assert len(images) == len(names) > 1 and all(len(b) > 100 for b in images)
    yorn = pd.read_csv(tmp_path / "Perspecta_ds_YORN.tsv", sep="\t")
    assert set(yorn["answer"]) <= {"Yes", "No"} and "A" not in yorn
    # unique across the files of one export (whichever answer types its split has): predictions map back
    indexes = [i for name in result["files"] for i in pd.read_csv(tmp_path / f"{name}.tsv", sep="\t")["index"]]
    assert len(result["files"]) >= 2 and sorted(indexes) == list(range(len(indexes)))


def test_sft_export_is_trl_format_and_needs_a_train_split(dataset_dir: Path, tmp_path: Path) -> None:
    from trl.data_utils import prepare_multimodal_messages

    result = export(dataset_dir, "sft", tmp_path / "sft")
    lines = [json.loads(x) for x in Path(result["path"]).read_text().splitlines()]
    items = {it.id: it for it in load_eval_dataset(dataset_dir).items}
    assert len(lines) == sum(it.split == "train" for it in items.values())
    for rec in lines:
        assert all(Path(p).is_file() for p in rec["images"])
        filled = prepare_multimodal_messages(rec["messages"], images=rec["images"])  # TRL's own check
        assert [p["image"] for p in filled[0]["content"] if p["type"] == "image"] == rec["images"]
        assert rec["messages"][1]["content"][0]["text"] == items[rec["id"]].answer
    loaded = datasets.load_dataset("json", data_files=result["path"], cache_dir=str(tmp_path / "c"))["train"]
    loaded = loaded.cast_column("images", datasets.List(datasets.Image()))
    assert loaded[0]["images"][0].size[0] > 0
    test_only = tmp_path / "test_only"
    test_only.mkdir()
    for name in ("manifest.json", "scenes.jsonl"):
        (test_only / name).write_bytes((dataset_dir / name).read_bytes())
    (test_only / "items.jsonl").write_text("".join(
        x + "\n" for x in (dataset_dir / "items.jsonl").read_text().splitlines() if '"split": "test"' in x))
    with pytest.raises(ValueError, match="no train split"):
        export(test_only, "sft", tmp_path / "none")


def _lmms_sample_log(path: Path, records, test_items) -> None:
    """A sample log as lmms-eval 0.7.3 writes it (evaluation_tracker.save_results_samples)."""
    by_id = {r.item_id: r for r in records}
    with open(path, "w") as fh:
        for doc_id, item in enumerate(test_items):
            r = by_id[item.id]
            fh.write(json.dumps({"doc_id": doc_id, "target": item.answer, "filtered_resps": r.response,
                                 "token_counts": [None], "doc_hash": "x", "input": item.question,
                                 "perspecta_exact_match": {"id": item.id, "correct": False}}) + "\n")


@pytest.mark.parametrize("model", ["baseline:chance", "baseline:oracle"])
def test_imported_predictions_score_like_our_runner(dataset_dir: Path, tmp_path: Path, model: str) -> None:
    evaluate(dataset_dir, model, tmp_path / "ours", progress=False)
    ours = read_records(tmp_path / "ours")
    test_items = load_eval_dataset(dataset_dir).select(split="test")
    want = summarize(ours)["runs"]

    _lmms_sample_log(tmp_path / "samples.jsonl", ours, test_items)
    import_predictions(tmp_path / "samples.jsonl", dataset=dataset_dir, fmt="lmms-eval", model=model,
                       out=tmp_path / "from_lmms")
    assert summarize(read_records(tmp_path / "from_lmms"))["runs"] == want

    # a VLMEvalKit prediction file: its TSV columns minus image, plus prediction (as its inference writes)
    export(dataset_dir, "vlmevalkit", tmp_path / "vlm")
    responses = {r.item_id: r.response for r in ours}
    frames = []
    for tsv in sorted((tmp_path / "vlm").glob("*.tsv")):
        frame = pd.read_csv(tsv, sep="\t").drop(columns=["image"])
        frame["prediction"] = [responses[i] for i in frame["id"]]
        frames.append(frame)
    merged = pd.concat(frames)
    merged.to_csv(tmp_path / "pred.tsv", sep="\t", index=False)
    import_predictions(tmp_path / "pred.tsv", dataset=dataset_dir, fmt="vlmevalkit", model=model, out=tmp_path / "v")
    assert summarize(read_records(tmp_path / "v"))["runs"] == want
    # without our id column the VLMEvalKit index alone maps rows back
    merged.drop(columns=["id"]).to_csv(tmp_path / "pred.csv", index=False)
    import_predictions(tmp_path / "pred.csv", dataset=dataset_dir, fmt="vlmevalkit", model=model, out=tmp_path / "c")
    assert summarize(read_records(tmp_path / "c"))["runs"] == want


def test_import_rejects_rows_that_are_not_in_the_dataset(dataset_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"doc_id": 0, "filtered_resps": "A", "perspecta_exact_match": {"id": "nope"}}) + "\n")
    with pytest.raises(PredictionFileError, match="not in the dataset"):
        import_predictions(bad, dataset=dataset_dir, fmt="lmms-eval", model="m", out=tmp_path / "o")
    bad.write_text(json.dumps({"doc_id": 9999, "filtered_resps": "A"}) + "\n")
    with pytest.raises(PredictionFileError, match="outside the exported split"):
        import_predictions(bad, dataset=dataset_dir, fmt="lmms-eval", model="m", out=tmp_path / "o")
    empty = tmp_path / "p.tsv"
    empty.write_text("index\tprediction\n0\t\n")
    result = import_predictions(empty, dataset=dataset_dir, fmt="vlmevalkit", model="m", out=tmp_path / "e")
    recs = read_records(tmp_path / "e")
    split = load_eval_dataset(dataset_dir).select(split="test")
    rec = next(r for r in recs if r.item_id == split[0].id)
    assert rec.status == "failed" and rec.correct is None  # an empty prediction is never guessed
    # the split's other items had no row: failed too, so the score is over the whole split
    assert len(recs) == len(split) and all(r.status == "failed" for r in recs)
    assert result["missing_from_split"] == len(split) - 1 and "no prediction in p.tsv" in recs[-1].error
