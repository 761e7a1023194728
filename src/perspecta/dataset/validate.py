"""``perspecta validate``: audit a dataset directory before anyone evaluates on it.

The audit reports *all* problems it can find (it does not stop at the first bad line),
each prefixed with the file and line it concerns, e.g.
``items.jsonl:7 (id 'dori/x/base/000003'): field 'answer': 'E' not among option labels A, B, C``.

Checks, in order:

1. ``manifest.json`` exists, parses and has the required keys (see
   :func:`perspecta.dataset.schema.check_manifest`).
2. Every ``items.jsonl`` line is JSON and passes :func:`check_item` (which covers mcq
   answers among the option labels, option/image indices, ``<image>`` markers).
3. Item ids are unique.
4. Every referenced image is a regular file inside the root (symlinks may not escape
   it), decodes completely with Pillow (truncated or corrupted files fail), and its
   sha256 matches the manifest. ``items.jsonl``, ``scenes.jsonl`` and every image must
   have a checksum entry, and every checksum entry must match its file.
5. Splits are image-disjoint: one image file used by items of two splits is an error.
   (A scene shared across splits through different images is only a warning.)
6. Groups -- items sharing a non-empty ``group`` are variants of one question:
   they must share suite, task and split, and exactly one of them has variant
   ``"base"``. An item with an empty ``group`` stands alone; if its variant is not
   ``"base"`` that is a warning (a variant without the base it varies).
7. Every item names a ``scene_id`` present in ``scenes.jsonl`` (scene ids unique).
8. The manifest's suites list each item's suite and task, and its counts
   (``items``, ``images`` = distinct referenced images, ``scenes``,
   ``by_task`` keyed ``"<suite>/<task>"``) match the files.
9. With ``derive_answers``, each item's answer is re-computed by its registered task's
   ``derive(item, scenes)`` and compared with the stored answer.

Image files under the root that no item references are reported as warnings.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, ImageFile

from perspecta.dataset.io import (
    IMAGES_DIR,
    ITEMS,
    MANIFEST,
    SCENES,
    DatasetError,
    iter_jsonl,
    read_manifest,
    scene_from_record,
    sha256_file,
)
from perspecta.dataset.item import Item
from perspecta.dataset.schema import check_item, check_manifest, check_relative_path
from perspecta.world.scene import Scene

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


@dataclass
class ValidationReport:
    """Outcome of :func:`validate_dataset`: errors make the dataset unusable, warnings do not."""

    root: Path
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        c = self.counts
        status = "OK" if self.ok else "FAILED"
        line = (
            f"{status}: {self.root} -- {c.get('items', 0)} items, {c.get('images', 0)} images, "
            f"{c.get('scenes', 0)} scenes; {len(self.errors)} error(s), {len(self.warnings)} warning(s)"
        )
        if "derived" in c:
            line += f"; {c['derived']} answer(s) re-derived, {c.get('derived_mismatches', 0)} mismatch(es)"
        return line

    def __str__(self) -> str:
        return format_report(self)


def format_report(report: ValidationReport, *, max_messages: int = 50) -> str:
    """Human-readable report for the CLI: summary line, then errors and warnings (capped)."""
    lines = [report.summary()]
    by_task = report.counts.get("by_task")
    if by_task:
        lines.append("  tasks: " + ", ".join(f"{k} {v}" for k, v in sorted(by_task.items())))
    by_split = report.counts.get("by_split")
    if by_split:
        lines.append("  splits: " + ", ".join(f"{k} {v}" for k, v in sorted(by_split.items())))
    for title, messages in (("errors", report.errors), ("warnings", report.warnings)):
        if not messages:
            continue
        lines.append(f"{title} ({len(messages)}):")
        lines.extend(f"  {m}" for m in messages[:max_messages])
        if len(messages) > max_messages:
            lines.append(f"  ... and {len(messages) - max_messages} more {title}")
    return "\n".join(lines)


class _Audit:
    """State shared by the individual checks of one validation run."""

    def __init__(self, root: Path, derive_answers: bool, decode_images: bool) -> None:
        self.root = root
        self.derive_answers = derive_answers
        self.decode_images = decode_images
        self.report = ValidationReport(root=root)
        self.manifest: dict[str, Any] | None = None
        self.items: list[Item] = []  # items that passed the schema check
        self.line_of: dict[int, int] = {}  # id(item) -> line number
        self.n_records = 0
        self.scenes: dict[str, Scene] = {}
        self.scenes_ok = False
        self.hashes: dict[str, str] = {}  # relative path -> sha256 of files we read
        self.image_refs: dict[str, list[str]] = defaultdict(list)  # path -> "items.jsonl:N (id ..)"

    def error(self, msg: str) -> None:
        self.report.errors.append(msg)

    def warn(self, msg: str) -> None:
        self.report.warnings.append(msg)

    def where(self, item: Item) -> str:
        return f"{ITEMS}:{self.line_of[id(item)]} (id {item.id!r})"

    # ------------------------------------------------------------------ checks

    def load_manifest(self) -> None:
        try:
            manifest = read_manifest(self.root / MANIFEST)
        except DatasetError as e:
            self.error(str(e).replace(str(self.root / MANIFEST), MANIFEST, 1))
            return
        for err in check_manifest(manifest):
            self.error(f"{MANIFEST}: {err}")
        self.manifest = manifest

    def load_items(self) -> None:
        path = self.root / ITEMS
        if not path.is_file():
            self.error(f"{ITEMS}: not found")
            return
        first_line_of_id: dict[str, int] = {}
        for lineno, value, err in iter_jsonl(path):
            self.n_records += 1
            if err is not None:
                self.error(f"{ITEMS}:{lineno}: {err}")
                continue
            item_id = value.get("id") if isinstance(value, dict) else None
            tag = f"{ITEMS}:{lineno}" + (f" (id {item_id!r})" if isinstance(item_id, str) else "")
            if isinstance(item_id, str):
                if item_id in first_line_of_id:
                    self.error(f"{tag}: field 'id': duplicate id (first at line {first_line_of_id[item_id]})")
                else:
                    first_line_of_id[item_id] = lineno
            errors = check_item(value)
            for e in errors:
                self.error(f"{tag}: {e}")
            images = value.get("images") if isinstance(value, dict) else None
            if isinstance(images, list):  # even for invalid items: their files are checked too
                for p in dict.fromkeys(x for x in images if isinstance(x, str) and not check_relative_path(x)):
                    self.image_refs[p].append(tag)
            if not errors:
                item = Item.from_dict(value)
                self.items.append(item)
                self.line_of[id(item)] = lineno
        if self.n_records == 0:
            self.error(f"{ITEMS}: no items")

    def load_scenes(self) -> None:
        path = self.root / SCENES
        if not path.is_file():
            self.error(f"{SCENES}: not found (answers cannot be re-derived)")
            return
        first_line: dict[str, int] = {}
        for lineno, value, err in iter_jsonl(path):
            if err is not None:
                self.error(f"{SCENES}:{lineno}: {err}")
                continue
            try:
                scene = scene_from_record(value)
            except ValueError as e:
                self.error(f"{SCENES}:{lineno}: {e}")
                continue
            if scene.scene_id in self.scenes:
                self.error(
                    f"{SCENES}:{lineno}: field 'scene_id': duplicate {scene.scene_id!r} "
                    f"(first at line {first_line[scene.scene_id]})"
                )
                continue
            self.scenes[scene.scene_id] = scene
            first_line[scene.scene_id] = lineno
        self.scenes_ok = True

    def check_images(self) -> None:
        refs = self.image_refs
        self.report.counts["images"] = len(refs)
        root_resolved = self.root.resolve()
        saved = ImageFile.LOAD_TRUNCATED_IMAGES
        ImageFile.LOAD_TRUNCATED_IMAGES = False  # a global other code may have relaxed
        try:
            for rel, tags in sorted(refs.items()):
                why = self._check_image(root_resolved, rel)
                if why:
                    more = f" and {len(tags) - 1} more" if len(tags) > 1 else ""
                    self.error(f"{rel}: {why} (used by {tags[0]}{more})")
        finally:
            ImageFile.LOAD_TRUNCATED_IMAGES = saved

        # split disjointness by image, and (softer) by scene
        users: dict[str, list[Item]] = defaultdict(list)
        for item in self.items:
            for p in dict.fromkeys(item.images):
                users[p].append(item)
        for rel, items in sorted(users.items()):
            splits = sorted({it.split for it in items})
            if len(splits) > 1:
                examples = ", ".join(
                    self.where(next(it for it in items if it.split == s)) + f" [{s}]" for s in splits
                )
                self.error(f"{rel}: used by items of different splits {', '.join(splits)}: {examples}")
        scene_splits: dict[str, set[str]] = defaultdict(set)
        for item in self.items:
            if item.scene_id:
                scene_splits[item.scene_id].add(item.split)
        for sid, splits in sorted(scene_splits.items()):
            if len(splits) > 1:
                names = ", ".join(sorted(splits))
                self.warn(f"scene {sid!r}: used by items of splits {names} (through different images)")

        # image files nobody references
        images_dir = self.root / IMAGES_DIR
        if images_dir.is_dir():
            orphans = sorted(
                p.relative_to(self.root).as_posix()
                for p in images_dir.rglob("*")
                if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
                and p.relative_to(self.root).as_posix() not in refs
                and p.relative_to(self.root).as_posix() not in self.depth_files()
            )
            for rel in orphans[:20]:
                self.warn(f"{rel}: not referenced by any item")
            if len(orphans) > 20:
                self.warn(f"... and {len(orphans) - 20} more unreferenced image files")

    def _check_image(self, root_resolved: Path, rel: str) -> str | None:
        path = self.root / rel
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError) as e:  # symlink loops
            return f"cannot resolve path: {e}"
        if not resolved.is_relative_to(root_resolved):
            return f"resolves outside the dataset root (to {resolved})"
        if not path.exists():
            return "missing image file"
        if not path.is_file():
            return "not a regular file"
        try:
            data = path.read_bytes()
        except OSError as e:
            return f"cannot read: {e}"
        self.hashes[rel] = hashlib.sha256(data).hexdigest()
        if self.decode_images:
            try:
                with Image.open(io.BytesIO(data)) as im:
                    im.verify()  # chunk structure and CRCs
                with Image.open(io.BytesIO(data)) as im:
                    im.load()  # full pixel decode: catches truncated data
            except Exception as e:  # Pillow raises many types for corrupt files
                return f"image does not decode: {type(e).__name__}: {e}"
        return None

    def depth_files(self) -> dict[str, str]:
        """Depth file -> its image, from the manifest's ``depth`` record (empty without one)."""
        depth = (self.manifest or {}).get("depth")
        files = depth.get("files") if isinstance(depth, dict) else None
        return {d: im for im, d in files.items()} if isinstance(files, dict) else {}

    def check_depth(self) -> None:
        """``generate --with-depth``: every image has a 16-bit depth PNG of its size beside it
        (or a recorded reason why not), listed in the checksums."""
        from perspecta.dataset.depth import SUFFIX, depth_rel, read_codes

        depth = (self.manifest or {}).get("depth")
        if depth is None:
            return
        files, without = depth.get("files"), depth.get("without", {})
        if not isinstance(files, dict) or not isinstance(without, dict) or not isinstance(depth.get("scale_m"), float):
            self.error(f"{MANIFEST}: field 'depth': needs 'scale_m' (float), 'files' and 'without' mappings")
            return
        sums = (self.manifest or {}).get("checksums") or {}
        for image in sorted(self.image_refs):
            if image not in files and image not in without:
                self.error(f"{image}: no depth map and no reason recorded in {MANIFEST} 'depth'")
        n = 0
        for image, rel in sorted(files.items()):
            if image not in self.image_refs:
                self.error(f"{MANIFEST}: field 'depth': {image} is not an image of any item")
            if rel != depth_rel(image):
                self.error(f"{rel}: depth file of {image} must be named {depth_rel(image)} (<stem>{SUFFIX})")
                continue
            if rel not in sums:
                self.error(f"{MANIFEST}: field 'checksums': no entry for depth map {rel}")
            path = self.root / rel
            if not path.is_file():
                self.error(f"{rel}: missing depth map of {image}")
                continue
            try:
                codes = read_codes(path)
                with Image.open(self.root / image) as im:
                    size = im.size
            except Exception as e:  # Pillow raises many types for corrupt files
                self.error(f"{rel}: depth map does not decode: {type(e).__name__}: {e}")
                continue
            if codes.shape[::-1] != size:
                self.error(f"{rel}: depth map is {codes.shape[1]}x{codes.shape[0]}, image {image} is {size[0]}x{size[1]}")
            n += 1
        self.report.counts["depth_maps"] = n

    def check_checksums(self) -> None:
        if self.manifest is None or not isinstance(self.manifest.get("checksums"), dict):
            return
        sums: dict[str, Any] = self.manifest["checksums"]
        expected_files = [ITEMS, SCENES, *sorted(self.image_refs)]
        for rel in expected_files:
            if rel not in sums and (self.root / rel).is_file():
                self.error(f"{MANIFEST}: field 'checksums': no entry for {rel}")
        root_resolved = self.root.resolve()
        for rel, digest in sorted(sums.items()):
            if not isinstance(digest, str) or check_relative_path(rel):
                continue  # already reported by check_manifest
            if rel in self.image_refs and rel not in self.hashes:
                continue  # the image check already reported why it could not be read
            path = self.root / rel
            if not path.resolve().is_relative_to(root_resolved):
                self.error(f"{MANIFEST}: field 'checksums': {rel} resolves outside the dataset root")
                continue
            if not path.is_file():
                self.error(f"{MANIFEST}: field 'checksums': {rel} does not exist")
                continue
            actual = self.hashes.get(rel) or sha256_file(path)
            if actual != digest.lower():
                self.error(f"{rel}: checksum mismatch: manifest has {digest[:12]}..., file has {actual[:12]}...")

    def check_groups(self) -> None:
        groups: dict[str, list[Item]] = defaultdict(list)
        for item in self.items:
            if item.group:
                groups[item.group].append(item)
            elif item.variant != "base":
                self.warn(f"{self.where(item)}: variant {item.variant!r} has no group (no base item to compare with)")
        self.report.counts["groups"] = len(groups)
        for gid, members in sorted(groups.items()):
            for attr in ("suite", "task", "split"):
                values = sorted({getattr(it, attr) for it in members})
                if len(values) > 1:
                    self.error(
                        f"group {gid!r}: items disagree on {attr} ({', '.join(values)}), e.g. {self.where(members[0])}"
                    )
            bases = [it for it in members if it.variant == "base"]
            if len(bases) != 1:
                what = "no" if not bases else f"{len(bases)}"
                ids = ", ".join(repr(it.id) for it in (bases or members)[:4])
                self.error(f"group {gid!r}: has {what} 'base' variant(s), needs exactly one (items {ids})")

    def check_readability(self) -> None:
        """Recorded readability facts must meet their contract (see world/readability.py)."""
        from perspecta.world import readability

        checked = 0
        for item in self.items:
            record = item.metadata.get("readability")
            if record:
                checked += 1
                for problem in readability.problems(record):
                    self.error(f"{self.where(item)}: unreadable: {problem}")
        self.report.counts["readability_checked"] = checked

    def check_scene_refs(self) -> None:
        if not self.scenes_ok:
            return
        referenced = set()
        for item in self.items:
            if not item.scene_id:
                self.error(f"{self.where(item)}: field 'scene_id': empty (every answer must derive from a scene)")
            elif item.scene_id not in self.scenes:
                self.error(f"{self.where(item)}: field 'scene_id': {item.scene_id!r} not in {SCENES}")
            else:
                referenced.add(item.scene_id)
            # items over several scenes (frames of a sequence) list the others here
            extra = item.metadata.get("scene_ids", [])
            for sid in extra if isinstance(extra, list) else []:
                if sid not in self.scenes:
                    self.error(f"{self.where(item)}: field 'metadata.scene_ids': {sid!r} not in {SCENES}")
                referenced.add(sid)
        unused = len(set(self.scenes) - referenced)
        if unused:
            self.warn(f"{SCENES}: {unused} scene(s) not referenced by any item")

    def check_manifest_consistency(self) -> None:
        m = self.manifest
        if m is None:
            return
        suites = m.get("suites") if isinstance(m.get("suites"), dict) else None
        if suites is not None:
            unlisted: Counter[str] = Counter()
            first: dict[str, Item] = {}
            for item in self.items:
                cfg = suites.get(item.suite)
                tasks = cfg.get("tasks") if isinstance(cfg, dict) else None
                if cfg is None or (isinstance(tasks, list) and item.task not in tasks):
                    key = f"{item.suite}/{item.task}"
                    unlisted[key] += 1
                    first.setdefault(key, item)
            for key, n in sorted(unlisted.items()):
                self.error(
                    f"{MANIFEST}: field 'suites': task {key} not listed, but {n} item(s) use it, "
                    f"e.g. {self.where(first[key])}"
                )
        counts = m.get("counts")
        if not isinstance(counts, dict):
            return
        actual = {"items": self.n_records, "images": self.report.counts.get("images", 0)}
        if self.scenes_ok:
            actual["scenes"] = len(self.scenes)
        for key, value in actual.items():
            claimed = counts.get(key)
            if isinstance(claimed, int) and claimed != value:
                self.error(f"{MANIFEST}: field 'counts.{key}': says {claimed}, found {value}")
        by_task = counts.get("by_task")
        if isinstance(by_task, dict) and len(self.items) == self.n_records:
            found = self.report.counts.get("by_task", {})
            for key in sorted(set(by_task) | set(found)):
                if by_task.get(key, 0) != found.get(key, 0):
                    self.error(
                        f"{MANIFEST}: field 'counts.by_task.{key}': says {by_task.get(key, 0)}, found {found.get(key, 0)}"
                    )

    def _lookup_task(self, registry: Any, key: tuple[str, str]) -> Any:
        """The TaskDef for ``key``, or None if no suite registers it."""
        try:
            return registry.get_task(*key)
        except KeyError:
            return None

    def derive(self) -> None:
        from perspecta.suites import registry

        tasks: dict[tuple[str, str], Any] = {}
        unknown: dict[tuple[str, str], list[Item]] = defaultdict(list)
        derived = mismatches = 0
        for item in self.items:
            if item.scene_id not in self.scenes:
                continue  # reported by check_scene_refs
            key = (item.suite, item.task)
            if key not in tasks:
                tasks[key] = self._lookup_task(registry, key)
            tdef = tasks[key]
            if tdef is None:
                unknown[key].append(item)
                continue
            try:
                answer = tdef.derive(item, self.scenes)
            except Exception as e:
                self.error(
                    f"{self.where(item)}: derive failed for task {item.suite}/{item.task}: {type(e).__name__}: {e}"
                )
                continue
            derived += 1
            if str(answer) != item.answer:
                mismatches += 1
                self.error(
                    f"{self.where(item)}: field 'answer': stored {item.answer!r} but derived {str(answer)!r} "
                    f"from scene {item.scene_id!r}"
                )
        for (suite, task), items in sorted(unknown.items()):
            self.error(
                f"unknown task {suite}/{task}: not registered, cannot derive answers of {len(items)} item(s), "
                f"e.g. {self.where(items[0])}"
            )
        self.report.counts["derived"] = derived
        self.report.counts["derived_mismatches"] = mismatches


def validate_dataset(
    root: str | Path, *, derive_answers: bool = True, decode_images: bool = True
) -> ValidationReport:
    """Audit the dataset directory ``root`` and return every problem found.

    ``decode_images=False`` skips the Pillow decode (hashes are still checked), for a
    quick pass over a very large dataset.
    """
    audit = _Audit(Path(root), derive_answers, decode_images)
    report = audit.report
    if not audit.root.is_dir():
        report.errors.append(f"{audit.root}: not a directory")
        return report
    audit.load_manifest()
    audit.load_items()
    audit.load_scenes()
    report.counts.update(
        items=audit.n_records,
        valid_items=len(audit.items),
        scenes=len(audit.scenes),
        by_task=dict(sorted(Counter(f"{it.suite}/{it.task}" for it in audit.items).items())),
        by_split=dict(sorted(Counter(it.split for it in audit.items).items())),
    )
    audit.check_images()
    audit.check_checksums()
    audit.check_depth()
    audit.check_groups()
    audit.check_readability()
    audit.check_scene_refs()
    audit.check_manifest_consistency()
    if derive_answers:
        audit.derive()
    return report
