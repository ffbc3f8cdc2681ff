"""``projection_cache``: what its entries depend on besides a record, and one look at the file per render."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonkeep.store import projection_cache
from commonkeep.store.layout import ensure_layout


def test_the_fingerprint_covers_the_redaction_code_where_it_lives() -> None:
    """The secret gate moved to ``commonkeep.secrets``: a change to its rules must still re-render
    every record (the fingerprint once named ``governance/secrets``, which no longer exists)."""
    import commonkeep.secrets
    import commonkeep.secrets.rules
    import commonkeep.store.render

    files = {f.resolve() for f in projection_cache.source_files()}
    for module in (commonkeep.secrets, commonkeep.secrets.rules, commonkeep.store.render):
        assert Path(str(module.__file__)).resolve() in files
    assert all(f.exists() for f in files)


def test_a_render_stats_the_file_once_and_a_later_render_sees_a_new_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lay = ensure_layout(tmp_path / "root")
    first = projection_cache.ProjectionCache(lay)
    first.put("a" * 32, ("block A", "L2", "active", None))
    first.save()
    stats: list[Path] = []
    real = projection_cache._stamp
    monkeypatch.setattr(projection_cache, "_stamp", lambda p: stats.append(p) or real(p))
    cache = projection_cache.ProjectionCache(lay)
    assert [cache.get("a" * 32) for _ in range(50)][-1] == ("block A", "L2", "active", None)
    assert cache.get("b" * 32) is None
    assert len(stats) == 1
    other = projection_cache.ProjectionCache(lay)  # another process wrote the file since: the next render reads it
    other.put("b" * 32, ("block B", "L2", "active", None))
    other.save()
    assert projection_cache.ProjectionCache(lay).get("b" * 32) == ("block B", "L2", "active", None)
