"""The review path: the queue a person decides, one candidate or a batch at a time.

``review`` lists what waits and writes manual patches, ``decide`` plans and applies one decision
(approve, edit, reject, keep both), ``undo`` reverses decisions, ``outcome`` tells what a decision
did, ``words``/``plainwords``/``show`` say it in plain words, ``terminal`` asks one by one.
Built on the patch path; nothing below imports it.
"""
