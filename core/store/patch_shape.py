"""A patch checked against its model without importing pydantic, when it is plainly valid.

Applying a patch validates it as ``models.MemoryPatch`` first. Importing pydantic and building the
models costs a new process about 0.1 s (a third of a ``commonkeep review --approve``), while the
patches commonkeep builds itself (a reviewer's decision) are valid by construction. ``plainly_valid``
answers from ``SCHEMA``, the fields of ``MemoryPatch`` and of the models inside it, with strict
types (a ``str`` field holds a ``str``, a list is a ``list``, a number is finite): ``True`` only
when pydantic would accept the patch too. Anything else (a wrong field, a value pydantic would
coerce, an alias written by its Python name) is ``False``, and the caller validates with pydantic,
which names what is wrong. ``SCHEMA`` is the models' own description (``from_models``); a test
keeps them equal.
"""

from __future__ import annotations

import math
from typing import Any

Kind = Any  # "str" | "float" | "bool" | "dict" | ("null" | "list", Kind) | ("lit", values) | ("model", name)
Field = tuple[Kind, bool, tuple[tuple[str, float], ...]]  # kind, required, constraints (min_length, ge, le)


def _null(kind: Kind) -> Kind:
    return ("null", kind)


def _list(kind: Kind) -> Kind:
    return ("list", kind)


def _lit(*values: str) -> Kind:
    return ("lit", tuple(sorted(values)))


_STR, _OPT_STR, _STRS = ("str", True, ()), (_null("str"), False, ()), (_list("str"), True, ())

SCHEMA: dict[str, dict[str, Field]] = {
    "MemoryPatch": {
        "patch_id": _STR, "created_at": _STR, "generated_by": (_lit("curator", "maintainer", "manual"), True, ()),
        "mode": (_lit("auto", "propose", "supervised"), True, ()), "summary": _STR,
        "ops": (_list(("model", "PatchOp")), True, ()),
        "status": (_lit("applied", "partially_applied", "proposed"), True, ()),
        "applied_at": (_null("str"), True, ()), "applied_ops": _STRS, "skipped_ops": _STRS,
    },
    "PatchOp": {
        "op_id": _STR,
        "op": (_lit("add", "add_exception", "contest", "decay", "delete", "deprecate", "flag_for_review",
                    "promote_to_vault_candidate", "reject_candidate", "supersede", "uncontest", "update",
                    "update_stability"), True, ()),
        "target": _OPT_STR, "target_id": _OPT_STR, "from": _OPT_STR,
        "record": (_null(("model", "MemoryRecord")), False, ()), "to_record": (_null(("model", "MemoryRecord")), False, ()),
        "updates": (_null("dict"), False, ()), "reason": _OPT_STR, "rationale": _OPT_STR,
        "risk": (_lit("high", "low", "medium"), True, ()), "default_selected": ("bool", True, ()), "candidate_id": _OPT_STR,
        "deletion_mode": (_null(_lit("audit_preserving", "privacy_purge")), False, ()),
        "deletion_reason": (_null(_lit("invalid", "other", "poisoned", "privacy_sensitive", "user_requested")), False, ()),
    },
    "MemoryRecord": {
        "id": _STR, "layer": (_lit("L1", "L2", "L3"), True, ()), "scope": (("model", "Scope"), True, ()), "tags": _STRS,
        "statement": ("str", True, (("min_length", 1),)),
        "evidence": (_list(("model", "EvidenceRef")), True, (("min_length", 1),)),
        "confidence": ("float", True, (("ge", 0), ("le", 1))), "stability": _STR, "created_at": _STR, "updated_at": _STR,
        "review": (("model", "Review"), True, ()), "status": _STR, "supersedes": _STRS, "superseded_by": _STRS,
        "vault_ref": (_null("str"), True, ()), "resource_id": _OPT_STR, "profile_id": _OPT_STR, "thread_id": _OPT_STR,
        "normalized_key": _OPT_STR, "applies_when": (_null(_list("str")), False, ()),
        "does_not_apply_when": (_null(_list("str")), False, ()), "known_exceptions": (_null(_list("str")), False, ()),
        "valid_from": _OPT_STR, "valid_to": _OPT_STR, "invalidated_by": _OPT_STR, "validity_reason": _OPT_STR,
        "ruleType": (_null(_lit("architecture", "avoid_pattern", "convention", "correction", "prefer_pattern", "preference",
                                "testing", "tool", "workflow")), False, ()),
        "memory_kind": (_null(_lit("event", "fact", "instruction", "task")), False, ()),
    },
    "Scope": {"type": _STR, "project": _OPT_STR, "domains": (_null(_list("str")), False, ())},
    "EvidenceRef": {"type": _STR, "ref": _STR, "note": _STR},
    "Review": {"cadence_days": ("float", True, ()), "next_review": _STR, "change_condition": ("str", True, (("min_length", 1),))},
}
# fields whose key in the JSON differs from the model's Python name (pydantic accepts both)
_PYTHON_NAMES = {"PatchOp": {"from_"}}


def plainly_valid(patch: Any) -> bool:
    """``True`` when ``patch`` is a valid ``MemoryPatch`` by ``SCHEMA``'s strict reading (so
    pydantic accepts it too); ``False`` means "ask pydantic", not "invalid"."""
    return _model(patch, "MemoryPatch")


def validate_patch(patch: Any, where: str = "") -> None:
    """``models.validate_as("patch", …)``, without importing pydantic when the patch is plainly
    valid: raises ``BadInput`` naming each wrong field otherwise."""
    if not plainly_valid(patch):
        from commonkeep.store.models import validate_as

        validate_as("patch", patch, where=where)


def _model(value: Any, name: str) -> bool:
    if type(value) is not dict or _PYTHON_NAMES.get(name, set()) & value.keys():
        return False
    for key, (kind, required, limits) in SCHEMA[name].items():
        if key not in value:
            if required:
                return False
            continue
        if not _value(value[key], kind) or not _within(value[key], limits):
            return False
    return True


def _value(v: Any, kind: Kind) -> bool:
    if kind == "str":
        return type(v) is str
    if kind == "bool":
        return type(v) is bool
    if kind == "float":
        return (type(v) is float and math.isfinite(v)) or (type(v) is int and abs(v) < 2**53)
    if kind == "dict":
        return type(v) is dict and all(type(k) is str for k in v)
    tag, arg = kind
    if tag == "null":
        return v is None or _value(v, arg)
    if tag == "list":
        return type(v) is list and all(_value(x, arg) for x in v)
    if tag == "lit":
        return type(v) is str and v in arg
    return _model(v, arg)  # "model"


def _within(v: Any, limits: tuple[tuple[str, float], ...]) -> bool:
    for what, bound in limits:
        if v is None:
            continue
        if what == "min_length" and len(v) < bound:
            return False
        if what == "ge" and not v >= bound:
            return False
        if what == "le" and not v <= bound:
            return False
    return True


def from_models() -> dict[str, dict[str, Field]]:
    """``SCHEMA`` as the pydantic models describe it (imports pydantic; for the test that keeps
    the two equal)."""
    import types
    from typing import Literal, Union, get_args, get_origin

    import annotated_types
    from pydantic import BaseModel

    from commonkeep.store import models

    def kind(ann: Any) -> Kind:
        origin = get_origin(ann)
        if origin in (Union, types.UnionType):
            (inner,) = [a for a in get_args(ann) if a is not type(None)]
            return _null(kind(inner))
        if origin is Literal:
            return _lit(*get_args(ann))
        if origin is list:
            return _list(kind(get_args(ann)[0]))
        if origin is dict:
            assert get_args(ann) == (str, Any), ann
            return "dict"
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return ("model", ann.__name__)
        return {str: "str", float: "float", bool: "bool"}[ann]

    def limits(meta: list[Any]) -> tuple[tuple[str, float], ...]:
        names = {annotated_types.MinLen: "min_length", annotated_types.Ge: "ge", annotated_types.Le: "le"}
        return tuple((names[type(m)], getattr(m, names[type(m)])) for m in meta)

    out: dict[str, dict[str, Field]] = {}

    def walk(model: Any) -> None:
        model.model_rebuild()
        out[model.__name__] = {f.alias or n: (kind(f.annotation), f.is_required(), limits(f.metadata))
                               for n, f in model.model_fields.items()}
        for f in model.model_fields.values():
            k = kind(f.annotation)
            while isinstance(k, tuple) and k[0] in ("null", "list"):
                k = k[1]
            if isinstance(k, tuple) and k[0] == "model" and k[1] not in out:
                walk(getattr(models, k[1]))

    walk(models.MemoryPatch)
    return out
