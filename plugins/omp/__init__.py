"""OMP host plugin for commonkeep: OMP (oh-my-pi) uses the shared root and starts with the handoff.

Modules (imported lazily; the package import stays cheap because every CLI run loads the plugin):

- ``commonkeep.ts`` — the TypeScript extension (package data), installed into OMP's agent dir;
- ``install`` — ``install`` / ``uninstall`` / ``status`` of that extension and the ``.env`` block;
- ``cli`` — ``commonkeep omp install | uninstall | status | dispatch``;
- ``acp`` — ``AcpClient`` (plain JSON-RPC over stdio to ``omp acp``), ``dispatch``, ``run_session``;
- ``demo`` — ``omp_step``, the OMP part of ``commonkeep demo``;
- ``plugin`` — the pluggy hooks (CLI command, doctor checks), entry point ``omp``.
"""
