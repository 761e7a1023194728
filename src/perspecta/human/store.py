"""Durable response storage: one SQLite file in WAL mode.

Why SQLite and not an fsync'd JSONL: several annotators answer at once, and the rules
"first serve time of an item", "one response per (annotator, item)" and "resume at the
first unanswered item" are exactly a primary key, a UNIQUE constraint and an indexed
query. A transaction either commits whole or not at all (no torn lines), WAL lets
``perspecta human results`` read while the server writes, and ``synchronous=FULL``
makes every committed answer survive a power cut. All writes go through one
connection under a lock, so concurrent requests are serialised, never interleaved.

Double submits are explicit: the first answer to an item is kept, a second one is
refused (:class:`Duplicate`) and never counted.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STORE_NAME = "responses.sqlite"
INTERRUPTION_S = 180.0  # SpinBench: longer intervals are interruptions, not decision time

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS serves (
    annotator TEXT NOT NULL, item_id TEXT NOT NULL, served_at REAL NOT NULL,
    PRIMARY KEY (annotator, item_id));
CREATE TABLE IF NOT EXISTS responses (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    annotator TEXT NOT NULL, item_id TEXT NOT NULL, answer TEXT NOT NULL, correct INTEGER NOT NULL,
    served_at REAL NOT NULL, answered_at REAL NOT NULL, rt_s REAL NOT NULL, client_rt_s REAL,
    interrupted INTEGER NOT NULL, feedback_shown INTEGER NOT NULL,
    UNIQUE (annotator, item_id));
CREATE TABLE IF NOT EXISTS flags (
    annotator TEXT NOT NULL, item_id TEXT NOT NULL, flagged_at REAL NOT NULL,
    PRIMARY KEY (annotator, item_id));
"""


class Duplicate(Exception):
    """The annotator already answered this item; ``stored`` is the kept response."""

    def __init__(self, stored: Response) -> None:
        super().__init__(f"{stored.annotator} already answered {stored.item_id}")
        self.stored = stored


class NotServed(ValueError):
    """An answer to an item the server never sent to this annotator."""


@dataclass
class Response:
    annotator: str
    item_id: str
    answer: str
    correct: bool
    served_at: float  # epoch seconds, first time the server sent this item to this annotator
    answered_at: float  # epoch seconds, when the server received the answer
    rt_s: float  # answered_at - served_at (server clock)
    client_rt_s: float | None  # browser: images shown -> key press (performance.now)
    interrupted: bool  # rt_s > INTERRUPTION_S
    feedback_shown: bool
    seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _response(row: sqlite3.Row) -> Response:
    return Response(annotator=row["annotator"], item_id=row["item_id"], answer=row["answer"],
                    correct=bool(row["correct"]), served_at=row["served_at"], answered_at=row["answered_at"],
                    rt_s=row["rt_s"], client_rt_s=row["client_rt_s"], interrupted=bool(row["interrupted"]),
                    feedback_shown=bool(row["feedback_shown"]), seq=row["seq"])


class Store:
    """The response log of one human evaluation (``DIR/responses.sqlite``)."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly:
            if not self.path.is_file():
                raise FileNotFoundError(f"{self.path}: no human-evaluation store here")
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.Lock()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row["value"])

    def set_meta(self, key: str, value: Any) -> None:
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))

    def bind(self, meta: dict[str, Any]) -> None:
        """Record the dataset and plan on first use; refuse a different one later.

        A store mixing two datasets or two plans would give meaningless statistics.
        """
        with self._tx() as db:
            for key, value in meta.items():
                row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
                if row is None:
                    db.execute("INSERT INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))
                elif json.loads(row["value"]) != value:
                    raise ValueError(f"{self.path} was started with {key} = {json.loads(row['value'])!r}, "
                                     f"not {value!r}; use another --out directory")

    # ------------------------------------------------------------------ serving and answering
    def mark_served(self, annotator: str, item_id: str, now: float | None = None) -> float:
        """The first time this item was served to this annotator (set now if never)."""
        now = time.time() if now is None else now
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO serves VALUES (?, ?, ?)", (annotator, item_id, now))
            row = db.execute("SELECT served_at FROM serves WHERE annotator = ? AND item_id = ?",
                             (annotator, item_id)).fetchone()
        return float(row["served_at"])

    def record(self, annotator: str, item_id: str, answer: str, correct: bool, *,
               client_rt_s: float | None, feedback_shown: bool, now: float | None = None) -> Response:
        """Append one response; :class:`Duplicate` if this annotator already answered the item,
        :class:`NotServed` if the item was never sent to them (no response time could be measured).
        """
        now = time.time() if now is None else now
        with self._tx() as db:
            old = db.execute("SELECT * FROM responses WHERE annotator = ? AND item_id = ?",
                             (annotator, item_id)).fetchone()
            if old is not None:
                raise Duplicate(_response(old))
            row = db.execute("SELECT served_at FROM serves WHERE annotator = ? AND item_id = ?",
                             (annotator, item_id)).fetchone()
            if row is None:
                raise NotServed(f"{item_id} was never served to {annotator}; fetch the item first")
            served = float(row["served_at"])
            rt = max(0.0, now - served)
            cur = db.execute(
                "INSERT INTO responses (annotator, item_id, answer, correct, served_at, answered_at, rt_s,"
                " client_rt_s, interrupted, feedback_shown) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (annotator, item_id, answer, int(correct), served, now, rt, client_rt_s,
                 int(rt > INTERRUPTION_S), int(feedback_shown)))
            seq = cur.lastrowid
        return Response(annotator, item_id, answer, correct, served, now, rt, client_rt_s,
                        rt > INTERRUPTION_S, feedback_shown, seq=seq or 0)

    def set_flag(self, annotator: str, item_id: str, flagged: bool) -> None:
        with self._tx() as db:
            if flagged:
                db.execute("INSERT OR IGNORE INTO flags VALUES (?, ?, ?)", (annotator, item_id, time.time()))
            else:
                db.execute("DELETE FROM flags WHERE annotator = ? AND item_id = ?", (annotator, item_id))

    # ------------------------------------------------------------------ reading
    def answered(self, annotator: str) -> set[str]:
        with self._lock:
            rows = self._db.execute("SELECT item_id FROM responses WHERE annotator = ?", (annotator,)).fetchall()
        return {r["item_id"] for r in rows}

    def flagged(self, annotator: str) -> set[str]:
        with self._lock:
            rows = self._db.execute("SELECT item_id FROM flags WHERE annotator = ?", (annotator,)).fetchall()
        return {r["item_id"] for r in rows}

    def responses(self) -> list[Response]:
        """Every response, in the order they were stored."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM responses ORDER BY seq").fetchall()
        return [_response(r) for r in rows]

    def flags(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM flags ORDER BY item_id, annotator").fetchall()
        return [dict(r) for r in rows]
