"""The local web review app (``commonkeep serve``, extra ``[web]``): inbox, decisions, patches,
memory, wiki and health pages on the same governance functions as the CLI.

Modules: ``app`` (routes and templates), ``queue`` (the review queue, paginated and kept fresh),
``actions`` (the only writes: the CLI's governance calls), ``views`` (read-only page data),
``wiki`` (wiki pages and git history), ``security`` (token, CSRF, loopback), ``server`` (start
and stop), ``cli`` (the ``serve`` command), ``bench`` (``commonkeep bench web``).
"""
