"""Running evaluations: ``evaluate(dataset_dir, backend, out_dir, concurrency=..., ...)``."""

from perspecta.run.runner import EvalConfig, EvalResult, evaluate, evaluate_async

__all__ = ["EvalConfig", "EvalResult", "evaluate", "evaluate_async"]
