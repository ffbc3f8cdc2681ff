"""The patch path: curate -> patch -> verify -> apply -> journal -> audit.

``curate`` proposes a patch file from the inbox, ``verify`` checks each op against its source,
``patch`` applies the selected ops under the writer lock (``ops``, with ``apply_journal`` for a
resumable apply), ``after_apply`` keeps the derived files in step, ``audit`` explains every record
line by a patch. ``forget``, ``purge`` and ``reinforce`` are the other ways records change; all of
them write patches. Imports only downwards: the gate, recall, the store, secrets.
"""
