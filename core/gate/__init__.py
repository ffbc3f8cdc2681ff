"""The gate: who stands behind a candidate, and may it apply itself.

The policy lives here and nowhere else: the stamps a host adapter sets (``user_turn``, the
writer's own ``--trust``), the user-turn rule, the agent-shell check, and the one auto-apply
decision (``autoapply``); ``capture`` is the one write path that carries them into the inbox.
Detection (``scoring``, ``poisoning``, ``matching``) sits beside the policy: it orders and explains
the queue, and never lets anything apply by itself. ``writer`` is the role gate and its lock.
"""
