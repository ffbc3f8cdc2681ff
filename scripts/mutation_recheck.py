"""Worker of ``scripts/mutation --recheck``: the named mutants checked against some test files only.

It does what mutmut does for each mutant (a process forked from one that collected the tests,
the mutant switched on by name, pytest with ``-x``, the cache plugin) without mutmut's pass over
every test to learn which tests reach which function: a quick second look at the survivors
with new test files. Prints ``killed NAME`` or ``survived NAME`` for each.

    python mutation_recheck.py SCRATCH_FOLDER TEST[,TEST…] NAMES_FILE
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> int:
    folder, tests, names_file = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    with open(names_file, encoding="utf-8") as fh:
        names = [line.strip() for line in fh if line.strip()]
    os.chdir(os.path.join(folder, "mutants"))
    sys.path.insert(0, ".")
    import pytest
    from mutmut.mutation.trampoline import set_mutant_under_test

    args = ["-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "tests._mutation_plugin",
            "-m", "not hermes and not omp and not bench", *tests]
    quiet = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    out, err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = quiet
    pytest.main(["--collect-only", "-qqq", *args])  # imports everything once; each fork inherits it
    sys.stdout, sys.stderr = out, err
    for name in names:
        pid = os.fork()
        if pid == 0:
            sys.stdout = sys.stderr = quiet
            signal.alarm(300)  # a mutant that loops forever counts as caught, as mutmut's timeout does
            set_mutant_under_test(name)
            try:
                code = int(pytest.main(args))
            except BaseException:  # noqa: BLE001 - any failure of the run is a failing test
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        print(("survived " if code == 0 else "killed ") + name, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
