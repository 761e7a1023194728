"""The results-log line parser gives the standard library's answer whichever parser is installed."""

from __future__ import annotations

import json
import math

import pytest

from perspecta import fastjson


@pytest.mark.parametrize("line", [
    b'{"item_id": "a/b/0", "correct": true, "scores": {"soft": 0.5}, "n": 3}\n',
    '{"text": "caf\\u00e9 \\ud83d\\ude00", "x": [1, 2.5, null]}',
    b'{"count": 9223372036854775807, "neg": -9223372036854775808}',
])
def test_same_values_as_the_standard_library(line: bytes | str) -> None:
    assert fastjson.loads(line) == json.loads(line)


def test_non_finite_literals_written_by_json_dumps_still_parse() -> None:
    line = json.dumps({"latency_s": float("nan"), "x": float("inf")})
    rec = fastjson.loads(line.encode())
    assert math.isnan(rec["latency_s"]) and rec["x"] == float("inf")


@pytest.mark.parametrize("line", [b'{"item_id": "a"', b"not json", b'{"a": 1} trailing'])
def test_invalid_lines_raise_json_decode_error(line: bytes) -> None:
    with pytest.raises(fastjson.JSONDecodeError):
        fastjson.loads(line)


def test_read_records_skips_only_an_unterminated_last_line(tmp_path) -> None:
    from perspecta.score.metrics import read_records

    good = json.dumps({"item_id": "s/t/0", "suite": "s", "task": "t", "model": "m", "answer": "A",
                       "status": "ok", "prediction": "A", "correct": True, "latency_s": float("nan")})
    log = tmp_path / "results.jsonl"
    log.write_text(good + "\n" + good.replace("s/t/0", "s/t/1") + "\n" + '{"item_id": "s/t/2", "sui')
    recs = read_records(log)
    assert [r.item_id for r in recs] == ["s/t/0", "s/t/1"] and math.isnan(recs[0].latency_s)
    log.write_text(good + "\n" + '{"item_id": "s/t/2", "sui\n' + good + "\n")
    with pytest.raises(ValueError, match=r"results.jsonl:2: invalid JSON"):
        read_records(log)
