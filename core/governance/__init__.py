"""Governance: nothing becomes memory without a gate a person can audit.

- ``curate``: turn inbox candidates into a proposed patch (scoring, matching, poisoning, secrets).
- ``patch``: apply a patch's selected ops, the only path into canonical records; ``purge``: the
  privacy scrub a purging deletion runs over every copy.
- ``review``, ``forget``, ``reinforce``, ``inquiries``: the librarian's other decisions.
- ``writer``: the writer role and the writer lock.
- ``cli``: the governance commands; ``plugin``: its hook implementations; ``bench``: its benchmark.
"""
