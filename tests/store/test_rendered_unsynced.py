"""A spliced MEMORY.md is written without fsync (it is derived); its index then holds the boot it
was written in, and after a crash of the machine (another boot) the index vouches for nothing: a
page a crash tore under its own stamp is never spliced from, the next apply renders it whole."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from commonkeep.store import render_splice, rendered_index
from commonkeep.store.layout import Layout, ensure_layout
from commonkeep.store.render import render_all
from commonkeep.store.render_splice import render_changed
from tests.store.test_render_splice import Apply, hand_append, pages, record

ANOTHER_BOOT = "00000000-0000-4000-8000-000000000000"
needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


@pytest.fixture
def booted(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """This boot's id, settable (``[ANOTHER_BOOT]``: the machine rebooted, or crashed)."""
    boot: list[str | None] = ["11111111-2222-4333-8444-555555555555"]
    monkeypatch.setattr(rendered_index, "_boot", boot)
    return boot


def fsynced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths every later ``os.fsync`` flushes."""
    seen: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return seen


def root_with_records(tmp_path: Path) -> Layout:
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l2, *(record(f"mem_{i}", f"Statement number {i} of the root, long enough to tear.") for i in range(60)))
    render_all(lay)
    return lay


def confidence(lay: Layout, rid: str, value: float) -> list[Path] | None:
    ap = Apply(lay)
    ap.put({**ap.recs[rid], "confidence": value})
    before = ap.write()
    return render_changed(lay, before, ap.changed)


def tear(page: Path) -> None:
    """What a crash can leave of a page written without fsync: a run of its blocks zeros, under the
    same inode, size and modification time (the stamp the index holds)."""
    st = page.stat()
    fd = os.open(page, os.O_WRONLY)
    try:
        os.pwrite(fd, bytes(st.st_size // 3), st.st_size // 3)
    finally:
        os.close(fd)
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = page.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)


@needs_proc
def test_a_spliced_page_is_not_fsynced_and_its_index_holds_the_boot(tmp_path: Path, booted: list[str | None],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    lay = root_with_records(tmp_path)
    ix = render_splice.load(lay)
    assert ix is not None and ix.boot is None  # render_all's pages are fsynced: good in any boot
    seen = fsynced(monkeypatch)
    assert confidence(lay, "mem_7", 0.25) == [lay.rendered_memory]
    assert not [p for p in seen if "MEMORY.md" in p or p == str(lay.rendered_dir)]
    assert any("L2.playbooks.jsonl" in p for p in seen)  # the record file is, as ever
    ix = render_splice.load(lay)
    assert ix is not None and ix.boot == booted[0]
    assert confidence(lay, "mem_8", 0.5) == [lay.rendered_memory]  # the same boot: spliced again


def test_after_a_crash_a_torn_page_is_never_spliced_from(tmp_path: Path, booted: list[str | None]) -> None:
    lay = root_with_records(tmp_path)
    assert confidence(lay, "mem_7", 0.25) == [lay.rendered_memory]  # written without fsync
    tear(lay.rendered_memory)
    booted[0] = ANOTHER_BOOT  # the machine crashed and came back
    assert render_splice.load(lay) is None
    assert confidence(lay, "mem_9", 0.5) is None  # nothing spliced: the caller renders whole
    twin = tmp_path / "twin"
    shutil.copytree(lay.root, twin, symlinks=True)
    render_all(lay)
    render_all(Layout(twin))
    assert b"\0" not in lay.rendered_memory.read_bytes()
    assert pages(lay.root) == pages(twin)
    ix = render_splice.load(lay)
    assert ix is not None and ix.boot is None
    assert confidence(lay, "mem_10", 0.75) == [lay.rendered_memory]  # spliced again from the whole page


@needs_proc
def test_a_page_render_all_keeps_is_made_durable(tmp_path: Path, booted: list[str | None],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``render_all`` finding the spliced page already right leaves it as it is, fsynced: its index
    (no boot) then vouches for it after a crash too."""
    lay = root_with_records(tmp_path)
    assert confidence(lay, "mem_7", 0.25) == [lay.rendered_memory]
    seen = fsynced(monkeypatch)
    assert render_all(lay) == []  # nothing to write
    assert str(lay.rendered_memory) in seen and str(lay.rendered_dir) in seen
    ix = render_splice.load(lay)
    assert ix is not None and ix.boot is None
    booted[0] = ANOTHER_BOOT
    assert render_splice.load(lay) is not None  # nothing unsynced: good after a reboot


@needs_proc
def test_without_a_boot_id_pages_are_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rendered_index, "_boot", [None])  # no /proc: boots cannot be told apart
    lay = root_with_records(tmp_path)
    seen = fsynced(monkeypatch)
    assert confidence(lay, "mem_7", 0.25) == [lay.rendered_memory]
    assert any("MEMORY.md" in p for p in seen) and str(lay.rendered_dir) in seen
    ix = render_splice.load(lay)
    assert ix is not None and ix.boot is None


def test_the_boot_id_is_read_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(rendered_index, "_boot", [])
    (tmp_path / "boot_id").write_text("d25d55c0-49c7-4fb1-8f7d-5180fd615020\n")
    monkeypatch.setattr(rendered_index, "_BOOT", str(tmp_path / "boot_id"))
    assert rendered_index.boot_id() == "d25d55c0-49c7-4fb1-8f7d-5180fd615020"
    (tmp_path / "boot_id").write_text("something else entirely, and long\n")
    assert rendered_index.boot_id() == "d25d55c0-49c7-4fb1-8f7d-5180fd615020"
    monkeypatch.setattr(rendered_index, "_boot", [])
    monkeypatch.setattr(rendered_index, "_BOOT", str(tmp_path / "missing"))
    assert rendered_index.boot_id() is None
