"""GRPO fine-tuning of a vision-language model on a PCSR dataset with TRL.

    perspecta generate --suite pcsr --n 200 --split train=0.8,test=0.2 --out pcsr-train
    python examples/grpo_train.py --dataset pcsr-train --model Qwen/Qwen2.5-VL-3B-Instruct --out grpo-out

Rewards are the PCSR paper's (section 5.2): R_acc (relaxed answer match), R_fmt
(think/answer structure) and R_reason (the reasoning's conclusion agrees with the
answer), weighted by ``--weights`` (main = 0.6/0.2/0.2; see
``perspecta.suites.pcsr.rewards.WEIGHTS``). ``--tiny`` swaps the model for a tiny random
LLaVA built offline, to check the plumbing on a CPU in seconds (it learns nothing).
Needs the ``train`` extra: ``pip install 'perspecta[train]'``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", required=True, type=Path, help="PCSR dataset with a train split")
    p.add_argument("--model", help="model id or path (a VLM with a chat template)")
    p.add_argument("--tiny", action="store_true", help="use a tiny random LLaVA built offline (smoke test)")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--weights", default="main", help="reward weight set: main, reason_free, balanced, no_reason")
    p.add_argument("--max-steps", type=int, default=200)
    p.add_argument("--num-generations", type=int, default=4)
    p.add_argument("--max-completion-length", type=int, default=256)
    p.add_argument("--learning-rate", type=float, default=1e-6)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if bool(args.model) == args.tiny:
        p.error("give exactly one of --model and --tiny")

    from transformers import AutoModelForImageTextToText, AutoProcessor
    from trl import GRPOConfig, GRPOTrainer

    from perspecta.interop.grpo import prompt_dataset, prompt_rows, reward_functions

    train = prompt_dataset(args.dataset, split="train")
    model_path = args.model
    if args.tiny:
        from perspecta.interop.tiny_vlm import build_tiny_llava

        texts = [part["text"] for row in prompt_rows(args.dataset) for part in row["prompt"][0]["content"]
                 if part["type"] == "text"]
        model_path = str(build_tiny_llava(args.out / "tiny-model", corpus=texts, seed=args.seed))
    processor = AutoProcessor.from_pretrained(model_path)
    model = AutoModelForImageTextToText.from_pretrained(model_path)
    funcs, weights = reward_functions(args.weights)
    config = GRPOConfig(
        output_dir=str(args.out), max_steps=args.max_steps, per_device_train_batch_size=args.num_generations,
        num_generations=args.num_generations, max_completion_length=args.max_completion_length,
        learning_rate=args.learning_rate, reward_weights=weights, seed=args.seed, logging_steps=1,
        save_strategy="no", report_to="none", use_cpu=args.tiny, bf16=False,
    )
    trainer = GRPOTrainer(model=model, args=config, reward_funcs=funcs, train_dataset=train,
                          processing_class=processor)
    t0 = time.perf_counter()
    result = trainer.train()
    summary = {"steps": trainer.state.global_step, "seconds": round(time.perf_counter() - t0, 2),
               "train_loss": result.training_loss,
               "rewards": {k: v for entry in trainer.state.log_history for k, v in entry.items() if "reward" in k}}
    (args.out / "grpo_summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
