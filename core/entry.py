"""The ``commonkeep`` console script's entry point.

Ctrl-C while the command line is still being imported (the first tens of milliseconds) exits 130
like Ctrl-C later on (``commonkeep.cli.main``), without a traceback. Python's own start-up before
this module runs is out of reach.
"""

from __future__ import annotations

EXIT_INTERRUPTED = 130  # commonkeep.errors.EXIT_INTERRUPTED, not imported: this module must stay bare


def main() -> int:
    """Import the CLI and run it; returns the exit code."""
    try:
        from commonkeep.cli import run_as_process as run
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return run()
