"""Install the real host programs the integration tests run against, into a cache folder.

Run as ``python -m tests.hosts.setup`` (scripts/test does). Idempotent: a host already installed
at the pinned version is left alone. The cache folder is ``$COMMONKEEP_HOST_CACHE`` or
``~/.cache/commonkeep-hosts``.
"""

from __future__ import annotations


def main() -> int:
    """Install the hosts; a host that cannot be installed is named with why, without a traceback."""
    import sys

    try:
        return _install()
    except RuntimeError as exc:
        print(f"hosts: cannot set up the real hosts: {exc}", file=sys.stderr)
        return 2


def _install() -> int:
    # Each host part adds its installer here (see tests/hosts/hermes.py, tests/hosts/omp.py).
    from tests.hosts import omp

    print(f"hosts: {omp.ensure()}", flush=True)
    from tests.hosts import hermes

    return hermes.main()


if __name__ == "__main__":
    raise SystemExit(main())
