"""Governance: the librarian's commands over the gate, the patch path and the review path.

The rules and mechanisms live in their own packages (``commonkeep.gate``, ``commonkeep.patches``,
``commonkeep.reviews``; ``commonkeep.secrets`` beneath the store). What is left here sits on top of
them: ``cli`` (curate, apply, ratify, review, forget, reinforce, inquiries, patches) and ``plugin``
(the hook implementations: doctor checks, the secret scan of a root).
"""
