"""The one declaration a suite package makes: :class:`Suite`.

A suite is found through the Python entry-point group ``perspecta.suites`` (each entry
names a :class:`Suite` object, e.g. ``dori = "perspecta.suites.dori.spec:SUITE"``), so a
separately installed package adds a suite without touching perspecta. Everything generic
code needs from a suite — how many tokens an answer may take, which extra per-record
scores to compute, which metrics to accumulate and which of them the leaderboard shows,
which cheap features the shortcut audit may use, the image size sent to models, the
difficulty presets, the report section — is a field here, read through
:mod:`perspecta.suites.registry`, never an ``if suite == ...`` elsewhere.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from perspecta.report.context import Context, Section
    from perspecta.score.records import ScoredRecord


class Accumulator(Protocol):
    """A metric folded over records one at a time, so memory does not grow with them.

    ``add`` takes one record as the dict of a ``results.jsonl`` line (the shape
    :meth:`ScoredRecord.to_dict` writes); ``merge`` folds in another accumulator of the
    same kind (shards, workers); ``result`` returns the JSON-serialisable figures.
    """

    def add(self, record: dict[str, Any]) -> None: ...

    def merge(self, other: Any) -> None: ...

    def result(self) -> dict[str, Any]: ...


RecordScorer = Callable[["ScoredRecord"], dict[str, float]]
AuditFeatures = Callable[[dict[str, Any]], dict[str, "str | float"]]
ReportSection = Callable[["Context"], "Section"]
# extra accuracy groupings a record belongs to, as (level, group name) pairs (e.g. DORI's
# per-object-category accuracy); rolled up by the report like the task and subtype levels
AccuracyFacets = Callable[[dict[str, Any]], tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class PromptSettings:
    """Token budget per answer mode; ``perspecta eval --max-tokens`` overrides both."""

    max_tokens: int = 512  # direct answers
    reasoning_max_tokens: int = 2048  # cot / think: at least this many

    def tokens_for(self, prompt_mode: str) -> int:
        return self.max_tokens if prompt_mode == "direct" else max(self.max_tokens, self.reasoning_max_tokens)


@dataclass(frozen=True)
class LeaderboardColumn:
    """A figure of the suite's metric shown as a column of the report's leaderboard.

    ``path`` are the keys leading to a share (0..1) in the accumulator's ``result()``,
    e.g. ``("consistency", "consistency")``; ``meaning`` goes into the leaderboard's
    caption, so a reader learns what the column counts (and over which records).
    """

    header: str
    path: tuple[str, ...]
    meaning: str = ""

    def value(self, suite_result: Mapping[str, Any]) -> float | None:
        """The share at ``path`` in one run's suite result, None where it has none."""
        x: Any = suite_result
        for key in self.path:
            if not isinstance(x, Mapping):
                return None
            x = x.get(key)
        return x if isinstance(x, int | float) and not isinstance(x, bool) else None


@dataclass(frozen=True)
class Suite:
    """Everything perspecta knows about one suite.

    ``package`` is imported once before the suite is used: importing it registers its
    tasks (``@registry.task``). Fields left at their defaults mean "nothing special".
    """

    name: str
    package: str
    description: str = ""
    prompt: PromptSettings = field(default_factory=PromptSettings)
    record_scorers: Sequence[RecordScorer] = ()
    # the suite's metric: a factory of a fresh Accumulator (one per run); its result()
    # is the run's ``suite_metrics[<suite>]`` in both `perspecta score` and the report
    metrics: Callable[[], Accumulator] | None = None
    # figures of that result the leaderboard shows as columns (e.g. a consistency)
    leaderboard_metrics: Sequence[LeaderboardColumn] = ()
    accuracy_facets: AccuracyFacets | None = None
    audit_features: AuditFeatures | None = None
    audit_metadata_keys: Sequence[str] | None = None
    eval_image_max_side: int | None = None  # None = native resolution
    # zlib level of the suite's PNGs (None = perspecta's default); a speed/size trade-off
    # chosen by measurement for suites whose frames are costly to encode
    png_compress_level: int | None = None
    difficulty_presets: Any = None  # what each preset sets (free-form, for `perspecta suites`)
    # "module:function" of the suite's report section, imported only when a report is built
    # (sections draw with matplotlib, which generation should never pay for)
    report_section: str | None = None
    # record shapes `perspecta bench` writes for synthetic scoring/report loads: task,
    # answer_type, n_options, optional granularity and metadata, ``score_keys`` (per-record
    # scores set to 1/0 with correctness) and ``variant_groups`` (items come in groups of
    # that many variants); empty = not part of the synthetic mix
    bench_records: Sequence[Mapping[str, Any]] = ()
    bench_task: str | None = None  # the task `perspecta bench` times generation on
    # anything else generic code asks for by name (TRAINING_PRESETS, GRPO_REWARDS, ...)
    settings: Mapping[str, Any] = field(default_factory=dict)

    def load(self) -> None:
        """Import the package (registers its tasks); idempotent."""
        importlib.import_module(self.package)

    def section(self) -> ReportSection | None:
        """The report section function, imported on first use."""
        if self.report_section is None:
            return None
        module, _, attr = self.report_section.partition(":")
        return getattr(importlib.import_module(module), attr)

    def setting(self, name: str, default: object = None) -> object:
        """A named setting: a typed field under its old module-attribute name, then ``settings``."""
        attr = _FIELD_OF.get(name)
        if attr is not None:
            value = getattr(self, attr)
            return default if value is None else value
        return self.settings.get(name, default)


# the module-attribute names generic code used before the spec, mapped to its fields
_FIELD_OF = {
    "EVAL_IMAGE_MAX_SIDE": "eval_image_max_side",
    "audit_features": "audit_features",
    "AUDIT_METADATA_KEYS": "audit_metadata_keys",
    "DIFFICULTY_PRESETS": "difficulty_presets",
    "PNG_COMPRESS_LEVEL": "png_compress_level",
}
