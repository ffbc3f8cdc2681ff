"""Sharing a memory root between machines and teams through an ordinary git remote.

The root is a git repository; the canonical JSONL files merge by record ``id`` through the
``commonkeep-jsonl`` merge driver (:mod:`commonkeep.share.merge`), daily logs through git's
``union`` driver, and derived files (indexes, renders, runtime, locks) stay out of git and are
rebuilt locally after every sync (:mod:`commonkeep.share.sync`). Conflicting updates are never
resolved silently: the other side's version becomes a contested candidate for the librarian.
"""
