"""Writes Hermes parked for approval hold no secret once harvested (issue 15 §4, agent folders)."""

from __future__ import annotations

import json
from pathlib import Path

from commonkeep.bench import secrets_corpus as corpus
from tests.governance.test_secrets_e2e import leaks


def test_a_harvested_pending_write_keeps_no_secret_in_the_hermes_folder(tmp_path: Path, root: Path) -> None:
    from commonkeep_hermes.capture import harvest_pending

    home = tmp_path / "hermes"
    pending, done = home / "pending" / "memory", home / "state" / "harvested"
    pending.mkdir(parents=True)
    items = [i for i in corpus.planted(70, seed=21) if len(i.fields) == 1]
    for n, item in enumerate(items):
        record = {"id": f"p{n}", "origin": "foreground",
                  "payload": {"action": "add", "target": "memory", "content": item.fields[0]}}
        (pending / f"p{n}.json").write_text(json.dumps(record), encoding="utf-8")

    ids = harvest_pending(pending, done, root)

    assert len(ids) == len(items) and not list(pending.iterdir())
    assert len(list(done.glob("*.json"))) == len(items)  # a record of each harvested write stays
    assert json.loads((done / "p0.json").read_text(encoding="utf-8"))["payload"]["action"] == "add"
    assert leaks(home, items) == [] and leaks(root, items) == []
