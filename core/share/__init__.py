"""Sharing a memory root between machines and teams through an ordinary git remote.

The root is a git repository; the canonical JSONL files merge by record ``id`` through the
``commonkeep-jsonl`` merge driver (:mod:`commonkeep.share.merge`), daily logs through git's
``union`` driver, and derived files (indexes, renders, runtime, locks) stay out of git and are
rebuilt locally after every sync (:mod:`commonkeep.share.sync`). Conflicting updates are never
resolved silently: the other side's version becomes a contested candidate for the librarian
(:mod:`commonkeep.share.contested`). Every tombstone wins over every other version of its record
after a merge (:mod:`commonkeep.share.settle`), a poisoning rejection over a promotion
(:mod:`commonkeep.share.rejections`); the work a sync owes is on disk before it starts
(:mod:`commonkeep.share.journal`); :mod:`commonkeep.share.history` rewrites purged text out of the
git history; :mod:`commonkeep.share.checks` adds the doctor findings.
"""
