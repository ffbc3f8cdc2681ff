"""The read-only pages over HTTP: the wiki (rendered, escaped, git history, roundtable exports),
memory search and a record's history, health, and a port already in use."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import git
import httpx
import pytest

from commonkeep.errors import BadInput
from commonkeep.store.core import Store
from commonkeep.web.server import prepare
from tests.web import seed as data


def _client(server: Any) -> httpx.Client:
    c = httpx.Client(follow_redirects=True, timeout=30)
    assert c.get(server.token_url).status_code == 200
    return c


def _wiki(tmp_path: Path) -> Path:
    project = tmp_path / "wiki-project"
    (project / "wiki" / "concepts").mkdir(parents=True)
    (project / "raw").mkdir()
    (project / "wiki" / "index.md").write_text("# Index\n\n- [Deploys](concepts/deploys.md)\n")
    (project / "wiki" / "concepts" / "deploys.md").write_text(
        "# Deploys\n\nStaging first. <script>window.__pwned=1</script> <img src=x onerror=alert(1)>\n\n"
        "[bad link](javascript:alert(1))\n")
    (project / "raw" / "room-design.md").write_text("[2026-12-01T10:00:00Z] ana#1: ship it </script>\n"
                                                    "[2026-12-01T10:01:00Z] bo#2: agreed\n")
    (project / "raw" / "notes.md").write_text("plain notes\n")
    repo = git.Repo.init(project)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Tester")
        cfg.set_value("user", "email", "t@example.invalid")
    repo.index.add(["wiki/index.md", "raw/notes.md"])
    repo.index.commit("ingest notes")
    repo.index.add(["wiki/concepts/deploys.md", "raw/room-design.md"])
    repo.index.commit("ingest the design room")
    return project


def test_wiki_pages_render_escaped_with_git_history(tmp_path: Path, serve: Any) -> None:
    server = serve(wiki=_wiki(tmp_path))
    c = _client(server)
    listing = c.get(f"{server.url}/wiki").text
    assert "wiki/concepts/deploys.md" in listing and "ingest the design room" in listing and "ingest notes" in listing
    assert re.search(r"raw/room-design\.md</a> <span class=\"tag\">roundtable export", listing)
    assert "raw/notes.md</a> <span" not in listing  # a plain source is not marked
    page = c.get(f"{server.url}/wiki", params={"page": "wiki/concepts/deploys.md"}).text
    assert "<h1>Deploys</h1>" in page
    assert "<script>window.__pwned" not in page and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "<img" not in page and 'href="javascript:' not in page
    assert "ingest the design room" in page and "ingest notes" not in page  # this page's own history
    export = c.get(f"{server.url}/wiki", params={"page": "raw/room-design.md"}).text
    assert "ship it &lt;/script&gt;" in export
    for bad in ("../../etc/passwd", "/etc/passwd", ".git/config"):
        assert c.get(f"{server.url}/wiki", params={"page": bad}).status_code == 404


def test_memory_search_history_and_health(root: Path, serve: Any) -> None:
    server = serve()
    c = _client(server)
    rec = Store(root).records()[0]
    found = c.get(f"{server.url}/memory", params={"q": "pipeline Fridays", "mode": "keyword"}).text
    assert rec["id"] in found
    assert rec["id"] not in c.get(f"{server.url}/memory", params={"q": "nothing like it", "mode": "keyword"}).text
    history = c.get(f"{server.url}/memory/{rec['id']}").text
    assert re.search(r"patch_\w+</a></td><td>add ✓", history)
    assert c.get(f"{server.url}/memory/mem_nope").status_code == 404
    health = c.get(f"{server.url}/health").text
    assert "commonkeep doctor" in health and str(root) in health
    cand = next(iter(Store(root).candidates(status="new")))
    detail = c.get(f"{server.url}/candidates/{cand['id']}").text
    assert "What approving does" in detail and 'class="diff"' in detail
    # a decided candidate is shown as stored (from the cached inbox), a missing one is 404
    from commonkeep.reviews.review import reject

    reject(root, [cand["id"]], reason="not durable", role=data.WRITER)
    shown = c.get(f"{server.url}/candidates/{cand['id']}")
    assert shown.status_code == 200, shown.text
    assert re.search(r"<h1[^>]*>.*?<small>([^<]*)<", shown.text).group(1) == "rejected"  # type: ignore[union-attr]
    assert "What approving does" not in shown.text
    assert c.get(f"{server.url}/candidates/cap_nope").status_code == 404


def test_a_port_in_use_is_a_clear_error(root: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(BadInput, match=f"cannot listen on 127.0.0.1:{port}"):
            prepare(root, data.WRITER, port=port)
    for bad in (65536, -1):  # out of range: the same clear error, not an OverflowError
        with pytest.raises(BadInput, match=f"cannot listen on 127.0.0.1:{bad}: .*0-65535"):
            prepare(root, data.WRITER, port=bad)


def test_an_l1_candidate_is_ratified_not_approved(root: Path, serve: Any) -> None:
    cid = data.add(Store(root), "The user is called Ana and prefers British spelling.", "hermes", tags=["identity"])
    server = serve()
    c = _client(server)
    page = c.get(f"{server.url}/candidates/{cid}").text
    assert 'value="ratify"' in page and 'value="approve"' not in page
    csrf = re.search(r'name="csrf" content="([^"]+)"', page)
    assert csrf
    refused = c.post(f"{server.url}/decide", data={"csrf": csrf.group(1), "action": "approve", "id": cid, "from": "candidate"})
    # refused in plain words on the candidate's own page, without the command-line hint
    assert refused.url.path == f"/candidates/{cid}" and "L1 is never applied by review" in refused.text
    assert "hint:" not in refused.text and "commonkeep ratify" not in refused.text
    done = c.post(f"{server.url}/decide", data={"csrf": csrf.group(1), "action": "ratify", "id": cid})
    assert done.status_code == 200 and f"ratified {cid}" in done.text
    assert "British spelling" in (root / "memory" / "L1.identity.jsonl").read_text()


def test_every_gate_injection_shows_as_escaped_text(tmp_path: Path, serve: Any) -> None:
    # the injection corpus the gate is tested with (tests/data/gate), as candidates, then rendered
    import json

    from markupsafe import escape

    corpus = Path(__file__).resolve().parents[1] / "data" / "gate" / "injections.jsonl"
    texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts.append(data.SCRIPT_CLOSE)
    store = Store(tmp_path / "root")
    ids = [data.add(store, t, "omp") for t in texts]
    stored = {c["id"]: c["text"] for c in store.candidates()}  # as stored (secrets redacted)
    server = serve()
    c = _client(server)
    seen = set()
    for n in range(1, len(texts) // 50 + 3):
        page = c.get(f"{server.url}/inbox", params={"page": n}).text
        body = page.split('<div id="live"', 1)[1]
        assert "<script" not in body.lower() and "<img" not in body.lower()
        for cid in ids:
            if f'data-id="{cid}"' in body:
                assert f'class="open">{escape(stored[cid])}</a></div>' in body, stored[cid]  # the statement is the row's link
                seen.add(cid)
    assert seen == set(ids)


def test_memory_pages_through_many_records(tmp_path: Path) -> None:
    from commonkeep.bench.curate import fill
    from commonkeep.web.server import start

    root = tmp_path / "big"
    fill(root, 0, 230)
    server = start(root, data.WRITER)
    try:
        c = _client(server)
        first = c.get(f"{server.url}/memory", params={"layer": "L2"}).text
        assert "230 record(s)" in first and "page 1 of 3" in first and first.count('<tr class="record">') == 100
        last = c.get(f"{server.url}/memory", params={"layer": "L2", "page": 3}).text
        assert last.count('<tr class="record">') == 30 and "layer=L2&amp;page=2" in last
    finally:
        server.stop()


def test_a_record_page_lists_its_history_past_hand_edited_patch_files(root: Path) -> None:
    """The record page's history reads every patch file: one whose ops are not a list, or whose op
    holds its record as a string, names nothing (it used to be an AttributeError, a 500 page)."""
    from commonkeep.web import views

    rec = Store(root).records()[0]
    before = views.history(root, rec["id"])
    assert before and before[-1]["applied"] is True
    patches = root / "patches"
    (patches / "patch_hand_1.json").write_text(json.dumps({"patch_id": "patch_hand_1", "ops": "not a list"}))
    (patches / "patch_hand_2.json").write_text(json.dumps(
        {"patch_id": "patch_hand_2", "applied_ops": "op_1", "ops": ["op", {"op_id": "op_1", "op": "add", "record": "x"},
                                                                     {"op_id": "op_2", "op": "update", "target_id": rec["id"]}]}))
    after = views.history(root, rec["id"])
    assert after[: len(before)] == before
    assert [(h["patch_id"], h["applied"]) for h in after[len(before):]] == [("patch_hand_2", False)]
