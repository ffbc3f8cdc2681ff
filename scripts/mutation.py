"""Mutation testing of the modules that carry commonkeep's guarantees (issue 28), with mutmut 3.

Run it through ``scripts/mutation`` (it picks the venv and runs at the lowest priority). One
module at a time, each in its own scratch folder (``$COMMONKEEP_MUTATION_DIR``, default
``/tmp/commonkeep-mutation/<module>``): mutmut needs the import names (``commonkeep``,
``commonkeep_hermes``) as folders, while the repository keeps them in ``core/`` and
``plugins/*/``, so the scratch folder holds a copy of each package under its import name, the
tests and ``pyproject.toml`` with a ``[tool.mutmut]`` section made here. Only the files (and,
where a module mixes concerns, the functions) named below are mutated; every mutant runs the
fast tests that guard it (no real Hermes, no OMP, no benchmarks), first failure stops it.

It is slow (minutes to an hour per module on a shared machine): run it by hand like a
benchmark, never in CI. The score of each module is written to ``score.json`` in its scratch
folder and printed; docs/development.md ("Mutation testing") keeps the scores and the reasons
survivors are equivalent.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = {"commonkeep": "core", "commonkeep_hermes": "plugins/hermes", "commonkeep_omp": "plugins/omp",
            "commonkeep_roundtable": "plugins/roundtable"}
PLUGIN = "tests/_mutation_plugin.py"  # scripts/mutation_plugin.py in the scratch folder: caches emptied per test
PYTEST_ARGS = ["-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "tests._mutation_plugin",
               "-m", "not hermes and not omp and not bench"]


@dataclass(frozen=True)
class Module:
    """What is mutated (files by import path; ``functions``: mutmut name globs, empty = all) and
    the tests that guard it."""

    files: tuple[str, ...]
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()


MODULES: dict[str, Module] = {
    # the writer role gate (gate/writer.py) and the cross-process writer lock (patches/lock.py)
    "writer": Module(
        ("commonkeep/gate/writer.py", "commonkeep/patches/lock.py"),
        ("tests/governance/test_role_gate.py", "tests/governance/test_writer_lock.py",
         "tests/governance/test_apply_lock.py", "tests/governance/test_guarantees_role_gate.py",
         "tests/governance/test_guarantees_writer.py")),
    # the web app's locks: Host check, token (cookie, header, one-time URL), CSRF keys, headers.
    # In process only: mutmut's wrapper of the async ``Guard.__call__`` makes uvicorn take the app
    # for an ASGI2 factory, so the real-server tests (test_security_headers, test_refusals) answer
    # 500 under mutation; they run in the ordinary suite.
    "web-security": Module(
        ("commonkeep/web/security.py",),
        ("tests/web/test_guarantees_guard.py",)),
    # a decision's line edit: what this process (or an earlier one, ``clean_memo``) found clean, and
    # the record lines parsed and checked once: skipping a check must never pass a broken line
    "store-edits": Module(
        ("commonkeep/store/clean_memo.py", "commonkeep/store/line_edit.py", "commonkeep/store/record_lines.py",
         "commonkeep/store/record_lookup.py"),
        ("tests/store/test_clean_memo.py", "tests/store/test_line_edit.py", "tests/store/test_record_lines.py",
         "tests/governance/test_apply_by_id.py")),
    # applying a patch's ops to canonical memory: adds, updates, supersedes, duplicates and tombstoned
    # ids refused, stale ops of a candidate decided since skipped with the reason. Only that path:
    # patch.py and ops.py hold 2065 mutants in all; the rest is the deletion path (forget,
    # interrupted deletions, the purge), the journal and its resume, the patch file's reading and
    # writing, each with tests of its own (test_apply_resume.py's kill -9 test takes 17 s under
    # mutmut, so the journal's resume is left to the ordinary suite)
    "patch-apply": Module(
        ("commonkeep/patches/patch.py", "commonkeep/patches/ops.py", "commonkeep/patches/apply_state.py"),
        ("tests/governance/test_apply.py", "tests/governance/test_decide.py",
         "tests/governance/test_no_repeat_proposals.py", "tests/governance/test_parity_apply.py",
         "tests/store/test_parity_ops.py", "tests/governance/test_decide_property.py",
         "tests/governance/test_guarantees_patch_apply.py", "tests/governance/test_apply_by_id.py"),
        ("commonkeep.patches.patch.x__apply_decided__*", "commonkeep.patches.ops.x__apply_op__*",
         "commonkeep.patches.ops.x__refuse_new_record__*", "commonkeep.patches.ops.x__change__*",
         "commonkeep.patches.apply_state.xǁ_State*", "commonkeep.patches.apply_state.xǁ_ById*",
         "commonkeep.patches.apply_state.x_reads_by_id__*")),
    # the commonkeep-jsonl git merge driver (a purge wins; field merge; side file)
    "share-merge": Module(
        ("commonkeep/share/merge.py",),
        ("tests/share/test_merge_purge_fast.py", "tests/share/test_guarantees_merge.py")),
    # forget --purge: scrubbing a purged record's text from every copy on this machine
    "purge": Module(
        ("commonkeep/patches/purge.py",),
        ("tests/share/test_forget_selection.py", "tests/governance/test_secrets_purge_copies.py",
         "tests/governance/test_interrupted_forget.py", "tests/governance/test_guarantees_purge.py")),
    # forget (the audit-preserving deletion: the tombstone, its mode and reason, the record's line kept
    # as deleted; what is selected; finishing an interrupted deletion) and undo (a decision reversed
    # by an audited patch, the candidate back in the queue). The purge's scrub itself is ``purge``
    "forget-undo": Module(
        ("commonkeep/patches/forget.py", "commonkeep/reviews/undo.py"),
        ("tests/governance/test_guarantees_forget_undo.py", "tests/share/test_forget_selection.py",
         "tests/governance/test_interrupted_forget.py", "tests/governance/test_apply.py",
         "tests/governance/test_decide.py", "tests/governance/test_user_feedback.py",
         "tests/governance/test_secrets_purge_copies.py", "tests/store/test_bad_input_audit.py")),
    # what fits a host's character budget: the projection, and the per-prompt selection's section
    # packing and daily digest
    "select-budgets": Module(
        ("commonkeep/recall/projection.py", "commonkeep/recall/select.py"),
        ("tests/recall/test_projection.py", "tests/recall/test_select.py", "tests/recall/test_guarantees_budgets.py"),
        # select_for_prompt is left out: its caps sit among timings, stats and file writes
        ("commonkeep.recall.projection.*", "commonkeep.recall.select.x__section__*",
         "commonkeep.recall.select.x__daily_digest__*")),
    # the Hermes middleware: memory writes staged, never passed through; provenance from the harness.
    # Of governance.py only the gate and its registration (the session hooks, auto-curation at
    # exit and the projection refresh are the real-Hermes tests' part)
    "hermes-middleware": Module(
        ("commonkeep_hermes/governance.py", "commonkeep_hermes/capture.py", "commonkeep_hermes/typed.py"),
        ("tests/hermes/test_gate.py", "tests/hermes/test_middleware_fast.py", "tests/hermes/test_guarantees_capture.py",
         "tests/hermes/test_files.py", "tests/governance/test_secrets_hermes_pending.py", "tests/hermes/test_typed.py",
         "tests/hermes/test_user_turn_record.py"),
        ("commonkeep_hermes.governance.xǁGateǁ*", "commonkeep_hermes.governance.x_register__*",
         "commonkeep_hermes.governance.x_write_origin__*", "commonkeep_hermes.governance.x_record_user_message__*",
         "commonkeep_hermes.capture.*", "commonkeep_hermes.typed.*")),
    # the auto-apply gate: the stamps it trusts (host, origin, writer), the policy, the threshold,
    # the curators' config and the auto-curation pass
    "autoapply": Module(
        ("commonkeep/gate/autoapply.py", "commonkeep/patches/auto.py", "commonkeep/store/curators.py"),
        ("tests/governance/test_guarantees_autoapply.py", "tests/governance/test_provenance_gate.py",
         "tests/governance/test_injection_policy.py", "tests/governance/test_stamp_forgery.py",
         "tests/governance/test_user_turn.py", "tests/governance/test_curator_config.py",
         "tests/governance/test_other_curators.py", "tests/governance/test_guarantees_gate_autoapply.py")),
    # the verified user_turn stamp: a statement the person explicitly asked to remember, stamped by a host
    "user-turn": Module(
        ("commonkeep/gate/user_turn.py",),
        ("tests/governance/test_user_turn.py", "tests/governance/test_stamp_forgery.py",
         "tests/governance/test_provenance_gate.py", "tests/governance/test_guarantees_gate_user_turn.py",
         "tests/governance/test_user_turn_pasted.py", "tests/governance/test_user_turn_refusals.py")),
    # the stamp part of scoring (what a claimed, unstamped trust class earns) and capture's
    # dropping of the stamp keys a caller passes. enrich_candidate is left out: its stamp rule
    # (claimed eligibility -> review_only) sits among confidence, matching and key derivation
    "stamps": Module(
        ("commonkeep/gate/scoring.py", "commonkeep/gate/capture.py"),
        ("tests/governance/test_guarantees_autoapply.py", "tests/governance/test_provenance_gate.py",
         "tests/governance/test_stamp_forgery.py", "tests/governance/test_injection_policy.py",
         "tests/governance/test_scoring.py", "tests/governance/test_guarantees_gate_stamps.py",
         "tests/governance/test_guarantees_gate_autoapply.py"),
        ("commonkeep.gate.scoring.x_auto_apply_blockers__*",
         "commonkeep.gate.capture.x__unstamped__*", "commonkeep.gate.capture.x_capture__*")),
    # the poisoning rules' one-pass literal prefilter: a rule it wrongly skips is a missed injection
    "poisoning-prefilter": Module(
        ("commonkeep/gate/prefilter.py",),
        ("tests/governance/test_poisoning_literals.py",)),
    # the exit gate's memo carried through commonkeep's own edit: a wrong carry leaves a secret unswept
    "exit-carry": Module(
        ("commonkeep/store/exitcarry.py",),
        ("tests/store/test_exit_carry.py",)),
    # the pages spliced after an apply: a wrong splice leaves MEMORY.md showing what the records do not say
    "render-splice": Module(
        ("commonkeep/store/render_splice.py", "commonkeep/store/rendered_index.py",
         "commonkeep/store/rendered_source.py", "commonkeep/store/page_writer.py"),
        ("tests/store/test_render_splice.py",)),
    # an agent's shell is not a person: the agent host among a command's parents (read from /proc)
    "agent-shell": Module(
        ("commonkeep/gate/agent_shell.py", "commonkeep/gate/peer.py"),
        ("tests/governance/test_agent_shell.py", "tests/governance/test_decisions_refuse_inside_agent.py",
         "tests/governance/test_redteam_decisions.py")),
    # what a stamp is bound to (the journal: stamps, typed inputs, revocations, a person's edits), what
    # apply accepts of a patch (verify: a statement, a record, an edit) and what audit/doctor name
    "stamp-journal": Module(
        ("commonkeep/gate/stamps.py", "commonkeep/patches/verify.py", "commonkeep/patches/stamp_audit.py"),
        ("tests/governance/test_stamp_journal.py", "tests/governance/test_forgery_corpus.py",
         "tests/governance/test_redteam_forgery.py", "tests/governance/test_stamp_forgery.py",
         "tests/governance/test_guarantees_patch_apply.py")),
    # the secret gate: detection, redaction, the doctor's file scan. Not its benchmark (bench.py,
    # bench/secrets_corpus*.py it generates, and bench/secrets_baseline.py, the rules before issue 15 frozen for the
    # benchmark's comparison: the gate never calls it). The tests are the ones that call the gate
    # directly, a few seconds each; the end-to-end runs through every entry point
    # (test_secrets_e2e*.py, 10 s each) check the places that call it, outside these files
    "secrets": Module(
        tuple(f"commonkeep/secrets/{f}.py" for f in
              ("__init__", "fields", "fold", "identifier", "named", "provider", "randomness", "rules", "scan", "structure")),
        ("tests/governance/test_secrets.py", "tests/governance/test_secrets_scan.py",
         "tests/governance/test_secrets_places.py", "tests/governance/test_secrets_quarantine.py",
         "tests/governance/test_secret_mutants.py", "tests/governance/test_secret_mutants_rules.py",
         "tests/governance/test_secret_false_positives.py", "tests/governance/test_secrets_named.py",
         "tests/governance/test_secrets_real_docs.py")),
    # is a value found in a secret's place a credential, or a word of the sentence (a plain value dictated, a
    # publishable key, a placeholder)
    "secret-values": Module(
        ("commonkeep/secrets/values.py",),
        ("tests/governance/test_secrets_dictated.py", "tests/governance/test_secrets_places_more.py", "tests/governance/test_secrets.py",
         "tests/governance/test_secrets_places.py", "tests/governance/test_secret_false_positives.py",
         "tests/governance/test_secrets_codes_and_qualifiers.py", "tests/governance/test_secrets_places_fed.py",
         "tests/governance/test_secrets_no_verb.py", "tests/governance/test_secrets_call_arguments.py")),
    # passwords on any tool's command and config lines, and service shapes no provider owns: what is a
    # secret's place, what is a port, a profile, a path or a message
    "secret-lines": Module(
        ("commonkeep/secrets/flags.py", "commonkeep/secrets/services.py"),
        ("tests/governance/test_secrets_codes_and_qualifiers.py", "tests/governance/test_secrets_literal_passes.py",
         "tests/governance/test_secrets_scan.py", "tests/governance/test_secrets_places_fed.py")),
    # a password given beside its place (a comment, a list, user / X for a place, "I set it to X"): what is
    # a password there, and what is a flag, a version, a tag or a word of the sentence
    "secret-asides": Module(
        ("commonkeep/secrets/asides.py",),
        ("tests/governance/test_secrets_asides.py", "tests/governance/test_secrets_context.py",
         "tests/governance/test_secrets_literal_passes.py", "tests/governance/test_secrets_scan.py")),
    # the pre-check and what is public by structure: the pre-check never says no where a rule finds something,
    # its short ways give the expressions' answers, and a run inside a structure public by design is not
    # sent to the provider scanner
    "secret-precheck": Module(
        ("commonkeep/secrets/precheck.py", "commonkeep/secrets/runs.py", "commonkeep/secrets/public.py",
         "commonkeep/secrets/spans.py", "commonkeep/secrets/kept.py"),
        ("tests/governance/test_secrets_short_ways.py", "tests/governance/test_secrets_scan.py",
         "tests/governance/test_secrets_public.py", "tests/governance/test_secrets_provider_worth.py")),
    # the rules' net: one Hyperscan pass names the rules that could match a text; a rule it leaves out
    # is never searched (a pattern narrowed for the engine, a text the engines read differently)
    "rule-net": Module(
        ("commonkeep/secrets/rule_net.py", "commonkeep/secrets/compiled.py"),
        ("tests/governance/test_secrets_rule_net.py",)),
    # the provider scanner's net: Kingfisher's own patterns in one Hyperscan pass; a text it says "nothing"
    # of is not sent to Kingfisher (a pattern narrowed, base64 not read as Kingfisher reads it, a text the
    # engines read differently, a version not checked)
    "provider-net": Module(
        ("commonkeep/secrets/provider_net.py",),
        ("tests/governance/test_secrets_provider_net.py",)),
}


def scratch_root() -> Path:
    return Path(os.environ.get("COMMONKEEP_MUTATION_DIR") or "/tmp/commonkeep-mutation")


def _toml_list(items: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(x) for x in items) + "]"


def _config(module: Module, tests: list[str]) -> str:
    """The repository's pyproject.toml with the module's ``[tool.mutmut]`` section."""
    config = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    return config + (
        "\n[tool.mutmut]\n"
        f"source_paths = {_toml_list(list(PACKAGES))}\n"
        f"only_mutate = {_toml_list(module.files)}\n"
        f"pytest_add_cli_args = {_toml_list(PYTEST_ARGS)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        "use_git_change_detection = false\n"
    )


def same_tests(module: Module, folder: Path) -> bool:
    """Whether a kept scratch folder was made with the ``[tool.mutmut]`` section made now (mutmut
    forgets every result when the test selection or the pytest arguments change, so a re-run of
    the survivors alone would leave the other mutants unchecked)."""
    tests = [t for t in module.tests if (REPO / t).exists()]
    kept = (folder / "pyproject.toml").read_text(encoding="utf-8").partition("\n[tool.mutmut]\n")[2]
    return kept == _config(module, tests).partition("\n[tool.mutmut]\n")[2]


def same_code(folder: Path) -> bool:
    """Whether a kept scratch folder holds the code as it is now: a re-run against changed code
    would mix mutants of the old code with tests of the new (or fail its clean run)."""
    for package, where in PACKAGES.items():
        for src in (REPO / where).rglob("*.py"):
            if "__pycache__" in src.parts:
                continue
            copy = folder / package / src.relative_to(REPO / where)
            if not copy.is_file() or copy.read_bytes() != src.read_bytes():
                return False
    return True


def prepare(name: str, module: Module, folder: Path) -> None:
    """A fresh scratch folder: the packages under their import names, the tests, the config."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package, where in PACKAGES.items():
        shutil.copytree(REPO / where, folder / package, ignore=ignore)
    _copy_tests(folder)
    missing = [t for t in module.tests if not (folder / t).exists()]
    tests = [t for t in module.tests if t not in missing]
    if missing:
        print(f"{name}: no such test file (left out): {', '.join(missing)}", file=sys.stderr)
    (folder / "pyproject.toml").write_text(_config(module, tests), encoding="utf-8")
    (folder / "children").mkdir()
    for package in PACKAGES:
        (folder / "children" / package).symlink_to(folder / "mutants" / package, target_is_directory=True)


# a mutant that loops while it allocates (``i += 1`` made ``i = 1`` in a loop that appends) would take
# the whole machine's memory before mutmut's timeout: each process of the run may hold this much data
MUTANT_DATA_LIMIT = 4 << 30


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_DATA, (MUTANT_DATA_LIMIT, MUTANT_DATA_LIMIT))


def _mutmut(folder: Path, *args: str, log: Path | None = None) -> subprocess.CompletedProcess[str]:
    # tests that start ``python -m commonkeep.cli`` (lock contention, real processes) must run the
    # mutated code too: the children find it first on PYTHONPATH (a folder of links to the mutated
    # packages: mutmut drops a path that is the folder it runs the tests in), and the mutant's
    # name in the environment
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(folder / "children")}
    if log is not None:  # a long run: its progress goes to the log as it comes
        with log.open("w", encoding="utf-8") as out:
            return subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=folder, env=env, text=True,
                                  stdout=out, stderr=subprocess.STDOUT, check=False, preexec_fn=_limit_memory)
    return subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=folder, env=env, text=True,
                          capture_output=True, check=False, preexec_fn=_limit_memory)


def _commit() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "core", "plugins", "tests"], cwd=REPO,
                           capture_output=True, text=True, check=False).stdout.strip()
    return proc.stdout.strip() + ("+uncommitted" if dirty else "")


def score(name: str, module: Module, folder: Path, commit: str | None = None) -> dict[str, object]:
    """Counts by status from ``mutmut results --all true`` (only the mutants this module selects)."""
    import fnmatch

    out = _mutmut(folder, "results", "--all", "true").stdout
    counts: dict[str, int] = {}
    survivors: list[str] = []
    out_statuses: dict[str, str] = {}
    unchecked: list[str] = []
    for line in out.splitlines():
        if ":" not in line:
            continue
        mutant, status = (x.strip() for x in line.rsplit(":", 1))
        if module.functions and not any(fnmatch.fnmatch(mutant, f) for f in module.functions):
            continue
        counts[status] = counts.get(status, 0) + 1
        if status in ("survived", "no tests", "suspicious"):  # suspicious: the test run itself died
            survivors.append(mutant)
            out_statuses[mutant] = status
        if status == "not checked":
            unchecked.append(mutant)
    rechecked, rechecked_alive = _rechecked(folder), _rechecked(folder, "survived")
    for mutant in [m for m in survivors if m in rechecked]:  # survivors a later --recheck saw killed
        survivors.remove(mutant)
        status = out_statuses.get(mutant, "survived")
        counts[status] -= 1
        counts["killed by --recheck"] = counts.get("killed by --recheck", 0) + 1
    for mutant in unchecked:  # mutants an interrupted run never reached, checked by --recheck --unchecked
        if mutant in rechecked or mutant in rechecked_alive:
            counts["not checked"] -= 1
            if mutant in rechecked:
                counts["killed by --recheck"] = counts.get("killed by --recheck", 0) + 1
            else:
                counts["survived"] = counts.get("survived", 0) + 1
                survivors.append(mutant)
    total = sum(n for status, n in counts.items() if status != "not checked")  # an interrupted run
    killed = (counts.get("killed", 0) + counts.get("timeout", 0) + counts.get("caught by type check", 0)
              + counts.get("killed by --recheck", 0))
    return {"module": name, "killed": killed, "total": total, "counts": counts, "survivors": sorted(survivors),
            "score": round(100 * killed / total, 1) if total else None,
            "date": datetime.now(UTC).strftime("%Y-%m-%d"), "commit": commit or _commit()}


def _copy_tests(folder: Path) -> None:
    """The repository's tests, and the plugin that empties commonkeep's caches before each test."""
    shutil.copytree(REPO / "tests", folder / "tests", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copyfile(REPO / "scripts" / "mutation_plugin.py", folder / PLUGIN)


def _rechecked(folder: Path, verdict: str = "killed") -> set[str]:
    path = folder / "recheck.json"
    if not path.is_file():
        return set()
    return set(json.loads(path.read_text(encoding="utf-8")).get(verdict, []))


def recheck(name: str, module: Module, folder: Path, tests: list[str], children: int, unchecked: bool = False) -> None:
    """The last run's survivors checked against ``tests`` only (``scripts/mutation_recheck.py``),
    the verdicts kept in ``recheck.json`` and counted by ``score``: a quick look at new test files
    where mutmut's own re-run would first run every test of the module to learn which reach what.
    A mutant these tests kill is killed; one they miss survived every test already."""
    if not (folder / "mutants").is_dir():
        raise SystemExit(f"{name}: no run in {folder} to recheck; run it first: scripts/mutation {name}")
    if not same_code(folder):
        raise SystemExit(f"{name}: the code changed since the run in {folder}; run it from scratch")
    missing = [t for t in tests if not (REPO / t).is_file()]
    if missing:
        raise SystemExit(f"{name}: no such test file: {', '.join(missing)}")
    for test in tests:  # the tests as they are now, where the workers run them
        shutil.copyfile(REPO / test, folder / "mutants" / test)
    shutil.copyfile(REPO / "scripts" / "mutation_plugin.py", folder / "mutants" / PLUGIN)
    if unchecked:  # an interrupted run's rest, against the module's own tests (mutmut's verdict)
        done = _rechecked(folder) | _rechecked(folder, "survived")
        out = _mutmut(folder, "results", "--all", "true").stdout
        names = [m for m, _, st in (line.rpartition(":") for line in out.splitlines() if ":" in line)
                 if st.strip() == "not checked" and m.strip() not in done]
        names = [m.strip() for m in names]
    else:
        names = list(score(name, module, folder)["survivors"])  # type: ignore[call-overload]
    what = "mutants the last run did not reach" if unchecked else "survivors"
    print(f"{name}: rechecking {len(names)} {what} against {', '.join(tests)} ({children} at a time)", flush=True)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(folder / "children")}
    procs = []
    for i in range(max(1, children)):
        part = folder / f"recheck-{i}.txt"
        part.write_text("\n".join(names[i :: max(1, children)]) + "\n", encoding="utf-8")
        procs.append(subprocess.Popen([sys.executable, str(REPO / "scripts" / "mutation_recheck.py"), str(folder),
                                       ",".join(tests), str(part)], stdout=subprocess.PIPE, text=True, env=env))
    killed, alive = set(_rechecked(folder)), set(_rechecked(folder, "survived"))
    with (folder / "recheck.log").open("a", encoding="utf-8") as log:
        for proc in procs:
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                log.flush()
                verdict, _, mutant = line.strip().partition(" ")
                if verdict == "killed":
                    killed.add(mutant)
                elif unchecked:  # a survivor of --recheck stays a survivor; an unchecked one becomes one
                    alive.add(mutant)
            proc.wait()
    (folder / "recheck.json").write_text(json.dumps({"tests": tests, "killed": sorted(killed), "survived": sorted(alive),
                                                     "commit": _commit()}, indent=2) + "\n", encoding="utf-8")


def refresh_tests(folder: Path) -> None:
    """The repository's tests as they are now, for a kept scratch folder (mutmut copies them on)."""
    shutil.rmtree(folder / "tests")
    _copy_tests(folder)


def run(name: str, keep: bool, children: int, survivors: bool = False) -> dict[str, object]:
    module = MODULES[name]
    folder = scratch_root() / name
    names = list(module.functions)
    commit = _commit()  # the code and tests this run sees (copied now)
    if (keep or survivors) and (folder / "mutants").is_dir():
        if not same_tests(module, folder) or not same_code(folder):
            print(f"{name}: the code, or this module's files or tests in scripts/mutation.py, changed since its "
                  f"last run in {folder}; run it from scratch: scripts/mutation {name}", file=sys.stderr)
            raise SystemExit(2)
        refresh_tests(folder)
        if survivors:  # only the mutants that survived the last run, against the tests as they are now
            names = list(score(name, module, folder)["survivors"])  # type: ignore[call-overload]
            if not names:
                print(f"{name}: no survivors to re-run")
                return score(name, module, folder)
            (folder / "recheck.json").unlink(missing_ok=True)  # mutmut's own verdicts take over
            # which tests reach which function is learnt again: mutmut learns it only for tests with
            # a new name, so a test changed in place to reach a function would not be run for it
            (folder / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    else:
        prepare(name, module, folder)
    args = ["run", "--max-children", str(children), *names]
    print(f"{name}: mutmut {' '.join(args)} in {folder}", flush=True)
    proc = _mutmut(folder, *args, log=folder / "run.log")
    if proc.returncode != 0:
        print(f"{name}: mutmut failed (exit {proc.returncode}); its output is in {folder / 'run.log'}", file=sys.stderr)
    result = score(name, module, folder, commit)
    (folder / "score.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    unchecked = result["counts"].get("not checked", 0)  # type: ignore[attr-defined]
    print(f"{name}: {result['killed']}/{result['total']} killed ({result['score']} %) at {result['commit']}"
          + (f"; {unchecked} not checked (interrupted)" if unchecked else ""))
    for mutant in result["survivors"]:  # type: ignore[union-attr]
        print(f"  survived: {mutant}")
    if result["survivors"]:
        print(f"  (the change of one: cd {folder} && {sys.executable} -m mutmut show NAME)")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/mutation", description=__doc__.split("\n\n")[0],
                                     epilog="modules: " + ", ".join(MODULES))
    parser.add_argument("modules", nargs="*", metavar="MODULE", help="modules to run, one after the other (default: all)")
    parser.add_argument("--keep", action="store_true",
                        help="reuse the scratch folder with the tests as they are now (mutmut re-runs what changed)")
    parser.add_argument("--survivors", action="store_true",
                        help="re-run only the mutants that survived the last run, against the tests as they are now")
    parser.add_argument("--recheck", metavar="TEST", action="append", default=[],
                        help="check the last run's survivors against this test file only (repeatable), "
                             "without mutmut's pass over every test; the score counts what it kills")
    parser.add_argument("--unchecked", action="store_true",
                        help="with --recheck: the mutants an interrupted run did not reach, instead of its survivors "
                             "(name every test file of the module)")
    parser.add_argument("--children", type=int, default=1, help="mutants tested at once (default 1)")
    parser.add_argument("--list", action="store_true", help="print each module's files and tests, run nothing")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    if args.list:
        for name, module in MODULES.items():
            print(f"{name}: {' '.join(module.files)}\n  tests: {' '.join(module.tests)}")
            if module.functions:
                print(f"  only: {' '.join(module.functions)}")
        return 0
    for name in args.modules or list(MODULES):
        if args.recheck:
            folder = scratch_root() / name
            recheck(name, MODULES[name], folder, args.recheck, args.children, args.unchecked)
            result = score(name, MODULES[name], folder)
            (folder / "score.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
            print(f"{name}: {result['killed']}/{result['total']} killed ({result['score']} %) with --recheck; "
                  f"{len(result['survivors'])} survivors")  # type: ignore[arg-type]
            continue
        run(name, args.keep, args.children, args.survivors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
