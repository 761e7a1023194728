"""Human evaluation app: plans, presentation, scoring, storage, HTTP security, 20
concurrent annotators over real HTTP, results, and a real headless Chromium session."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from perspecta.cli import app as cli_app
from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.dataset.io import read_items
from perspecta.human.answers import check_answer, score_human
from perspecta.human.app import Session, create_app
from perspecta.human.plan import PlanSettings, build_plan, check_annotator, subtype_key, task_key
from perspecta.human.present import present
from perspecta.human.results import collect, write_results
from perspecta.human.store import STORE_NAME, Duplicate, NotServed, Store
from perspecta.score.metrics import read_records, summarize

TASKS = ["spin/mental_rotation", "spin/identity_matching", "dori/directional_facing",
         "pcsr/counting", "lrr/ca_m"]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("human") / "ds"
    generate_dataset(out, GenerationConfig(suites=["spin", "dori", "pcsr", "lrr"], n=2, seed=0, tasks=TASKS))
    return out


@pytest.fixture(scope="session")
def items(dataset):
    return {it.id: it for it in read_items(dataset / "items.jsonl")}


@contextlib.contextmanager
def serve(session: Session):
    """A real uvicorn server on a free loopback port, in a thread; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(session), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        assert time.time() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        session.store.close()


def raw_get(base: str, path: str) -> int:
    """Status of a GET sent byte for byte (clients would normalise '..' away)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        head = s.recv(4096).decode("latin-1")
    return int(head.split(" ", 2)[1])


def answer_for(item, annotator: str) -> str:
    """A deterministic, annotator-dependent valid answer (so mixed-up rows would show)."""
    k = sum(map(ord, annotator + item.id))
    if item.answer_type == "mcq":
        return item.options[k % len(item.options)].label
    if item.answer_type == "yesno":
        return ("yes", "no")[k % 2]
    return str(k % 3)


# ---------------------------------------------------------------------------- plans

def test_plans_are_deterministic_grouped_and_balanced(items):
    all_items = list(items.values())
    full = PlanSettings()
    a = build_plan(all_items, full, "ann-1")
    assert a == build_plan(all_items, full, "ann-1")
    assert sorted(a) == sorted(items)
    assert a != build_plan(all_items, full, "ann-2")  # order is per annotator
    tasks = [task_key(items[i]) for i in a]
    runs = [t for k, t in enumerate(tasks) if k == 0 or t != tasks[k - 1]]
    assert len(runs) == len(set(runs)) == len(TASKS)  # each task is one contiguous block

    balanced = PlanSettings(kind="balanced", per_subtype=1, seed=3)
    b = build_plan(all_items, balanced, "ann-1")
    counts = Counter(subtype_key(items[i]) for i in b)
    assert set(counts) == {subtype_key(it) for it in all_items} and set(counts.values()) == {1}
    assert b == build_plan(all_items, balanced, "ann-1")
    others = {tuple(build_plan(all_items, balanced, f"p{k}")) for k in range(8)}
    assert len(others) > 1  # different annotators get different samples

    for bad in ("", "a b", "../x", "x" * 65, "é"):
        with pytest.raises(ValueError):
            check_annotator(bad)
    with pytest.raises(ValueError):
        PlanSettings(kind="balanced")


# ---------------------------------------------------------------------------- presentation

def _present(item):
    return present(item, lambda rel: "/" + rel, lambda rel: "pcsr" in rel)


def test_presentation_of_each_item_kind(items):
    rot = _present(items["spin/mental_rotation/base/000000"])
    stem_images = [im["index"] for b in rot["blocks"] if b["kind"] == "images" for im in b["images"]]
    assert stem_images == [0]
    assert [c["image"]["index"] for c in rot["choices"]] == [1, 2, 3, 4]
    assert [c["label"] for c in rot["choices"]] == ["A", "B", "C", "D"]

    ident = _present(items["spin/identity_matching/base/000000"])
    assert all(b["kind"] == "text" for b in ident["blocks"])  # the three or four images are the options
    n_views = len(items["spin/identity_matching/base/000000"].images)
    assert n_views in (3, 4) and sorted(c["image"]["index"] for c in ident["choices"]) == list(range(n_views))

    dori = _present(items["dori/directional_facing/base/000000-granular"])
    text = "\n".join(b["text"] for b in dori["blocks"] if b["kind"] == "text")
    assert "FORMAT YOUR RESPONSE" not in text and "Work through these steps" not in text
    assert "OPTIONS" not in text and "TASK:" in text
    for c in dori["choices"]:
        assert c["text"] and f"{c['label']}. {c['text']}" not in text  # options once, as buttons
    assert dori["prompt"] == items["dori/directional_facing/base/000000-granular"].question

    pano = _present(items["pcsr/counting/base/000000-open"])
    assert pano["choices"] == [] and pano["answer_type"] == "open"
    assert pano["blocks"][0]["images"][0]["panorama"] is True
    assert not any("<think>" in b.get("text", "") for b in pano["blocks"])

    seq = _present(items["lrr/ca_m/base/000000"])
    row = seq["blocks"][0]["images"]
    assert [im["caption"] for im in row] == ["Image A", "Image B", "Image C", "Image D"]
    assert [im["index"] for im in row] == [0, 1, 2, 3]
    assert [c["label"] for c in seq["choices"]] == ["yes", "no"]


# ---------------------------------------------------------------------------- answers

def test_answers_are_validated_and_scored_like_model_responses(items):
    mcq = items["spin/mental_rotation/base/000000"]
    assert check_answer(mcq, " d ") == "D"
    with pytest.raises(ValueError):
        check_answer(mcq, "E")
    yn = items["lrr/ca_m/base/000000"]
    assert check_answer(yn, "Yes") == "yes"
    with pytest.raises(ValueError):
        check_answer(yn, "maybe")
    opn = items["pcsr/counting/base/000000-open"]
    with pytest.raises(ValueError):
        check_answer(opn, "  ?! ")

    rec = score_human(mcq, "ann", mcq.answer, 2.5)
    assert (rec.model, rec.status, rec.prediction, rec.correct, rec.latency_s) == ("human:ann", "ok", mcq.answer, True, 2.5)
    wrong = next(o.label for o in mcq.options if o.label != mcq.answer)
    assert score_human(mcq, "ann", wrong, None).correct is False
    words = {"1": "one", "2": "two", "3": "three"}
    spelled = score_human(opn, "ann", words.get(opn.answer, opn.answer), None)
    assert spelled.correct is True and spelled.scores["relaxed"] == 1.0
    odd = score_human(opn, "ann", "no idea", None)  # unreadable as a number: kept, wrong, still "ok"
    assert (odd.status, odd.correct, odd.prediction) == ("ok", False, "no idea")


# ---------------------------------------------------------------------------- storage

def test_store_is_idempotent_and_times_responses(tmp_path):
    store = Store(tmp_path / STORE_NAME)
    assert store.mark_served("a", "x", now=100.0) == 100.0
    assert store.mark_served("a", "x", now=150.0) == 100.0  # the first serve counts
    r = store.record("a", "x", "B", True, client_rt_s=1.5, feedback_shown=False, now=112.5)
    assert (r.rt_s, r.interrupted) == (12.5, False)
    with pytest.raises(Duplicate) as dup:
        store.record("a", "x", "C", False, client_rt_s=None, feedback_shown=False, now=120.0)
    assert dup.value.stored.answer == "B"
    with pytest.raises(NotServed):
        store.record("a", "y", "A", False, client_rt_s=None, feedback_shown=False, now=190.0)
    store.mark_served("a", "y", now=200.0)
    slow = store.record("a", "y", "A", False, client_rt_s=None, feedback_shown=False, now=200.0 + 181)
    assert slow.interrupted
    assert [(x.item_id, x.answer) for x in store.responses()] == [("x", "B"), ("y", "A")]
    store.close()


# ---------------------------------------------------------------------------- HTTP

def test_http_rejects_traversal_unknown_items_and_bad_input(dataset, tmp_path):
    session = Session.open(dataset, tmp_path / "h", PlanSettings())
    with serve(session) as base:
        with httpx.Client(base_url=base) as c:
            state = c.get("/api/a/ann/state").json()
            first = state["next"]["id"]
            item = c.get(f"/api/a/ann/item/{first}").json()
            img = item["choices"][0].get("image") or item["blocks"][0]["images"][0]
            ok = c.get(img["url"])
            assert ok.status_code == 200 and ok.headers["content-type"] == "image/png"
            assert "default-src 'self'" in ok.headers["content-security-policy"]

            assert c.get("/api/a/ann/item/spin/nope/base/000000").status_code == 404
            assert c.post("/api/a/ann/answer/spin/nope/base/000000", json={"answer": "A"}).status_code == 404
            assert c.get("/api/a/bad%20id/state").status_code == 400
            assert c.get("/a/bad%21id").status_code == 400
            assert c.post(f"/api/a/ann/answer/{first}", json={"answer": "Z"}).status_code == 400
            assert c.post(f"/api/a/ann/answer/{first}", content=b"{not json").status_code == 400
            assert c.post(f"/api/a/ann/flag/{first}", json={"flagged": "yes"}).status_code == 400
            unserved = next(i for i in session.plan("ann") if i != first)
            assert c.post(f"/api/a/ann/answer/{unserved}", json={"answer": "A"}).status_code == 409

            gold = session.items[first].answer
            assert c.post(f"/api/a/ann/answer/{first}", json={"answer": gold, "client_rt_ms": 900}).status_code == 200
            again = c.post(f"/api/a/ann/answer/{first}", json={"answer": gold})
            assert again.status_code == 409 and again.json()["kept"] == gold
            assert c.get("/api/a/ann/state").json()["done"] == 1

        secret = dataset / "items.jsonl"
        assert secret.is_file()
        for path in ["/images/../items.jsonl", "/images/%2e%2e%2fitems.jsonl", "/images/%2e%2e/manifest.json",
                     "/images/..%2f..%2f..%2fetc%2fpasswd", "/static/../app.py", "/static/%2e%2e%2fapp.py",
                     "/static/..%2f..%2fhuman%2fapp.py", "/images/spin/../../items.jsonl",
                     "/%2e%2e/%2e%2e/etc/passwd", "/images//etc/passwd"]:
            status = raw_get(base, path)
            assert 400 <= status < 500, (path, status)
    assert len(Store(tmp_path / "h" / STORE_NAME, readonly=True).responses()) == 1


def test_request_bodies_over_64_kib_get_413(dataset, tmp_path):
    """Issue 15: bodies were read whole, however large; now 413 past 64 KiB, announced or streamed."""
    session = Session.open(dataset, tmp_path / "h", PlanSettings())
    with serve(session) as base:
        with httpx.Client(base_url=base) as c:
            first = c.get("/api/a/ann/state").json()["next"]["id"]
            c.get(f"/api/a/ann/item/{first}")
            big = {"answer": "A", "pad": "x" * (70 * 1024)}
            r = c.post(f"/api/a/ann/answer/{first}", json=big)
            assert r.status_code == 413 and "64 KiB" in r.json()["error"]

            def chunks():  # no Content-Length: the limit applies to what actually arrives
                for _ in range(20):
                    yield b"x" * 8192

            assert c.post(f"/api/a/ann/flag/{first}", content=chunks()).status_code == 413
            assert c.get("/api/a/ann/state").json()["done"] == 0
            ok = c.post(f"/api/a/ann/answer/{first}", json={"answer": session.items[first].answer})
            assert ok.status_code == 200  # a normal answer still goes through
    assert len(Store(tmp_path / "h" / STORE_NAME, readonly=True).responses()) == 1


def test_twenty_concurrent_annotators_lose_nothing(dataset, tmp_path, capsys):
    session = Session.open(dataset, tmp_path / "h", PlanSettings(kind="balanced", per_subtype=1, seed=7))
    n_items = len(session.plan("p00"))
    annotators = [f"p{k:02d}" for k in range(20)]

    async def annotate(client: httpx.AsyncClient, who: str) -> int:
        sent = 0
        while True:
            state = (await client.get(f"/api/a/{who}/state")).json()
            if state["next"] is None:
                return sent
            iid = state["next"]["id"]
            assert (await client.get(f"/api/a/{who}/item/{iid}")).status_code == 200
            body = {"answer": answer_for(session.items[iid], who), "client_rt_ms": 10}
            r = await client.post(f"/api/a/{who}/answer/{iid}", json=body)
            assert r.status_code == 200, r.text
            sent += 1
            if sent % 6 == 0:  # a double submit (e.g. a double click): refused, not counted
                assert (await client.post(f"/api/a/{who}/answer/{iid}", json=body)).status_code == 409

    async def run_all(base: str) -> list[int]:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            return await asyncio.gather(*(annotate(client, a) for a in annotators))

    with serve(session) as base:
        t0 = time.perf_counter()
        sent = asyncio.run(run_all(base))
        elapsed = time.perf_counter() - t0
    assert sent == [n_items] * 20 and n_items == len({subtype_key(it) for it in session.items.values()})
    rows = Store(tmp_path / "h" / STORE_NAME, readonly=True).responses()
    assert len(rows) == 20 * n_items
    assert Counter(r.annotator for r in rows) == {a: n_items for a in annotators}
    assert all(r.answer == answer_for(session.items[r.item_id], r.annotator) for r in rows)
    assert len({(r.annotator, r.item_id) for r in rows}) == len(rows)
    with capsys.disabled():
        print(f"\n20 annotators: {len(rows)} answers in {elapsed:.2f} s = {len(rows) / elapsed:.0f} answers/s "
              "(each with a state + item + answer request)")


# ---------------------------------------------------------------------------- results

def test_results_summary_and_scored_records(dataset, items, tmp_path):
    out = tmp_path / "h"
    session = Session.open(dataset, out, PlanSettings())
    store = session.store
    plan = session.plan("alice")[:4]
    t0 = 1000.0
    for k, iid in enumerate(plan):  # alice: right, right, wrong, right; the third one interrupted
        item = items[iid]
        store.mark_served("alice", iid, now=t0)
        assert item.answer_type == "mcq"  # the plan starts with SpinBench's multiple-choice tasks
        ans = item.answer if k != 2 else next(o.label for o in item.options if o.label != item.answer)
        store.record("alice", iid, ans, bool(score_human(item, "alice", ans, None).correct), client_rt_s=1.0,
                     feedback_shown=False, now=t0 + (200.0 if k == 2 else 2.0 + k))
    store.mark_served("bob", plan[0], now=t0)
    store.record("bob", plan[0], items[plan[0]].answer, True, client_rt_s=None, feedback_shown=True, now=t0 + 4)
    store.set_flag("bob", plan[1], True)
    store.set_flag("alice", plan[1], True)
    store.set_flag("alice", plan[3], True)
    store.set_flag("alice", plan[3], False)
    store.close()

    summary = write_results(out)
    recs = read_records(out / "results.jsonl")
    assert len(recs) == 5 and {r.model for r in recs} == {"human:alice", "human:bob"}
    by = {(r.model, r.item_id): r for r in recs}
    third = by[("human:alice", plan[2])]
    assert third.latency_s is None and third.correct is False and third.status == "ok"
    first = by[("human:alice", plan[0])]
    it = items[plan[0]]
    assert (first.latency_s, first.suite, first.task, first.subtype, first.group, first.n_options, first.answer_type) \
        == (2.0, it.suite, it.task, it.subtype, it.group, len(it.options), it.answer_type)
    assert first.metadata == it.metadata
    assert summarize(recs)["runs"][0]["model"] == "human:alice"

    overall = summary["overall"]
    assert overall["n_responses"] == 5 and overall["interruptions"] == 1
    assert overall["rt"]["n"] == 4 and overall["rt"]["mean_s"] == pytest.approx((2 + 3 + 5 + 4) / 4)
    assert overall["accuracy_mean"] == pytest.approx((0.75 + 1.0) / 2)
    assert overall["accuracy_sd"] == pytest.approx(0.1767767, abs=1e-6)
    assert summary["flags"] == [{"item_id": plan[1], "task": task_key(items[plan[1]]),
                                 "subtype": items[plan[1]].subtype, "n": 2, "annotators": ["alice", "bob"]}]
    md = (out / "human_summary.md").read_text()
    assert plan[1] in md and "± 17.7" in md
    # who stopped early is shown: alice answered 4 of her plan, bob 1 (their plans are the full split)
    n_plan = len(session.plan("alice"))
    alice = summary["by_annotator"]["alice"]
    assert (alice["planned"], alice["unanswered"]) == (n_plan, n_plan - 4)
    assert summary["by_annotator"]["bob"]["unanswered"] == len(session.plan("bob")) - 1
    assert summary["unanswered"] == 2 * n_plan - 5 and f"| alice | 4 | {n_plan} | {n_plan - 4} |" in md
    # bob saw the right answer after answering (serve --feedback): said beside the accuracy
    assert summary["overall"]["with_feedback"] == 1 and summary["by_annotator"]["alice"]["with_feedback"] == 0
    assert "1 of 5 answers were given with feedback" in md

    runner = CliRunner()
    res = runner.invoke(cli_app, ["human", "results", str(out)])
    assert res.exit_code == 0, res.output
    assert "flagged by 2" in res.output
    assert f"alice: answered 4 of {n_plan} planned items" in " ".join(res.output.split())
    res = runner.invoke(cli_app, ["score", str(out / "results.jsonl")])
    assert res.exit_code == 0, res.output
    assert "human:alice" in res.output

    bad = runner.invoke(cli_app, ["human", "results", str(tmp_path / "nowhere")])
    assert bad.exit_code == 2 and "no human-evaluation store" in bad.output
    with pytest.raises(ValueError, match="plan"):
        Session.open(dataset, out, PlanSettings(kind="balanced", per_subtype=1))


# ---------------------------------------------------------------------------- browser

def test_browser_session_keyboard_flag_reload_resume(dataset, items, tmp_path):
    import playwright.sync_api as playwright  # the test extra; Debian chromium comes from scripts/setup.sh

    assert Path("/usr/bin/chromium").exists(), "Debian chromium is not installed (run scripts/setup.sh)"
    out = tmp_path / "h"
    session = Session.open(dataset, out, PlanSettings())
    plan = session.plan("tester")
    keyed: list[tuple[str, str]] = []  # (item id, answer the key stands for)

    def answer_current(page) -> None:
        page.wait_for_selector("body[data-mode=item]")
        iid = page.get_attribute("#item", "data-item-id")
        item = items[iid]
        if item.answer_type == "open":
            page.fill("#open-answer", "2")
            page.press("#open-answer", "Enter")
            keyed.append((iid, "2"))
        elif item.answer_type == "yesno":
            page.keyboard.press("n")
            keyed.append((iid, "no"))
        else:  # the second option by number, the first by letter, alternately
            if len(keyed) % 2:
                page.keyboard.press("2")
                keyed.append((iid, item.options[1].label))
            else:
                page.keyboard.press(item.options[0].label.lower())
                keyed.append((iid, item.options[0].label))
        # progress updates before the next item loads (the page's CSP forbids wait_for_function's eval)
        page.wait_for_selector(f"#progress:text-is('{len(keyed)} / {len(plan)}')")
        page.wait_for_selector("body[data-mode=item], body[data-mode=notice], body[data-mode=done]")
        if page.get_attribute("body", "data-mode") == "notice":
            page.keyboard.press("Enter")

    with serve(session) as base, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/")
        page.fill("#annotator", "tester")
        page.press("#annotator", "Enter")
        page.wait_for_selector("body[data-mode=notice]")
        assert plan[0].split("/")[1] in page.text_content("#notice-title")
        page.keyboard.press("Enter")
        for _ in range(3):
            answer_current(page)
        page.wait_for_selector("body[data-mode=item]")
        flagged = page.get_attribute("#item", "data-item-id")
        page.keyboard.press("?")
        page.wait_for_selector("#item[data-flagged='1']")
        for _ in range(3):
            answer_current(page)
        # every stem and option image is actually on screen
        page.wait_for_selector("body[data-mode=item]")
        sizes = page.evaluate("[...document.querySelectorAll('#item img')].map(i => i.naturalWidth * i.clientWidth)")
        assert sizes and all(s > 0 for s in sizes)

        page.reload()
        page.wait_for_selector("body[data-mode=notice]")  # after a reload the current task is announced
        assert page.text_content("#progress") == f"6 / {len(plan)}"
        page.keyboard.press("Enter")
        page.wait_for_selector("body[data-mode=item]")
        assert page.get_attribute("#item", "data-item-id") == plan[6]  # resumes at the first unanswered
        answer_current(page)
        assert page.text_content("#progress") == f"7 / {len(plan)}"
        browser.close()
    assert errors == []
    assert [k[0] for k in keyed] == plan[:7]

    db = sqlite3.connect(out / STORE_NAME)
    rows = db.execute("SELECT item_id, answer, rt_s, client_rt_s FROM responses ORDER BY seq").fetchall()
    assert [(r[0], r[1]) for r in rows] == keyed
    assert all(r[2] > 0 and r[3] is not None and 0 < r[3] <= r[2] + 0.5 for r in rows)
    assert db.execute("SELECT annotator, item_id FROM flags").fetchall() == [("tester", flagged)]
    db.close()

    summary, recs, _ = collect(out)
    assert [(r.item_id, r.response) for r in recs] == keyed
    assert all(r.model == "human:tester" and r.status == "ok" for r in recs)
    assert [f["item_id"] for f in summary["flags"]] == [flagged]
    assert summary["overall"]["n_responses"] == 7


def test_feedback_mode_and_cli_argument_errors(dataset, tmp_path):
    session = Session.open(dataset, tmp_path / "h", PlanSettings(), feedback=True)
    with serve(session) as base, httpx.Client(base_url=base) as c:
        iid = c.get("/api/a/fb/state").json()["next"]["id"]
        item = session.items[iid]
        assert c.get(f"/api/a/fb/item/{iid}").status_code == 200
        wrong = next(o.label for o in item.options if o.label != item.answer)
        body = c.post(f"/api/a/fb/answer/{iid}", json={"answer": wrong}).json()
        assert (body["correct"], body["gold"]) == (False, item.answer)
    runner = CliRunner()
    res = runner.invoke(cli_app, ["human", "serve", str(dataset), "--out", str(tmp_path / "x"), "--plan", "balanced"])
    assert res.exit_code == 2 and "--per-subtype" in res.output
    res = runner.invoke(cli_app, ["human", "serve", str(tmp_path / "missing"), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "manifest" in res.output
