"""By hand, not in CI: the pages after a one-record change at N records, spliced (``render_changed``)
against rendered whole (``render_all`` with the records the apply computed, as ``apply_patch`` calls it).

    .venv/bin/python scripts/bench_render_splice.py [--records 100000] [--repeat 5] [--root DIR]

Builds DIR (default: a temporary folder, removed after) with ``bench.search.synthetic_records(N)``
in ``memory/L2.playbooks.jsonl``, renders it once (the index written), then changes one random
record's confidence ``--repeat`` times for each way, each change written as the apply writes it
(``Store.rewrite_records`` with ``RecordChanges``). Prints each time and the median.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, help="build the root here (kept); default: a temporary folder")
    args = parser.parse_args()

    from commonkeep.bench.search import synthetic_records
    from commonkeep.secrets import redact_obj
    from commonkeep.store import record_lines, render_splice
    from commonkeep.store.core import Store
    from commonkeep.store.jsonl import append_jsonl
    from commonkeep.store.layout import ensure_layout
    from commonkeep.store.line_edit import RecordChanges
    from commonkeep.store.render import render_all

    base = args.root or Path(tempfile.mkdtemp(prefix="ck-splice-")) / "root"
    lay = ensure_layout(base)
    if not lay.l2.stat().st_size:
        records, _ = synthetic_records(args.records)
        append_jsonl(lay.l2, records, fsync=False)
    redact_obj({"statement": "warm the redactor up, as an apply has"})
    t = time.perf_counter()
    render_all(lay)
    print(f"render_all, first (index written): {time.perf_counter() - t:.2f} s, MEMORY.md "
          f"{lay.rendered_memory.stat().st_size / 1e6:.1f} MB, index {(lay.runtime_dir / render_splice.NAME).stat().st_size / 1e6:.1f} MB")
    rng = random.Random(42)
    count = lay.l2.read_bytes().count(b"\n")

    def one_change() -> dict[Path, dict[str, Any]]:
        rid = f"mem_bench_{rng.randrange(count):07d}"
        data = lay.l2.read_bytes()
        at = data.index(b'{"id":"' + rid.encode() + b'"')
        rec = json.loads(data[at:data.index(b"\n", at)])
        rec["confidence"] = 0.51 if rec["confidence"] != 0.51 else 0.52  # a change the page shows
        return {lay.l2: {rid: rec}}

    spliced = []
    for _ in range(args.repeat):
        changed = one_change()
        before = render_splice.stamps(lay)  # under the writer lock, before the apply writes
        Store(lay.root).rewrite_records(lay.l2, RecordChanges(changed[lay.l2]))
        t = time.perf_counter()
        written = render_splice.render_changed(lay, before, changed)
        spliced.append(time.perf_counter() - t)
        assert written == [lay.rendered_memory], written
        print(f"render_changed: {1000 * spliced[-1]:.0f} ms")
    whole = []
    for _ in range(args.repeat):
        changed = one_change()
        files = record_lines.records_by_file(Store(lay.root))  # what the apply read
        assert files is not None
        Store(lay.root).rewrite_records(lay.l2, RecordChanges(changed[lay.l2]))
        after = {**files, **{p: RecordChanges(c)(files.get(p, [])) for p, c in changed.items()}}
        t = time.perf_counter()
        render_all(lay, after)
        whole.append(time.perf_counter() - t)
        print(f"render_all(records_after): {1000 * whole[-1]:.0f} ms")
    print(f"median: render_changed {1000 * statistics.median(spliced):.0f} ms, "
          f"render_all {1000 * statistics.median(whole):.0f} ms")
    if args.root is None:
        shutil.rmtree(base.parent)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
