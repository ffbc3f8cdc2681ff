"""What a repeated command-line option means: a list adds up, a single value is given once.

argparse lets a second ``--tags B`` replace ``--tags A`` (and ``--role b`` replace ``--role a``)
without a word, so something the person typed is lost. Here:

- ``ListOption`` (``--tags``, ``--ops``, ``--approve`` …): every occurrence adds its items, each
  value may be comma-separated, the order is kept and duplicates dropped:
  ``--tags a,b --tags c,a`` gives ``["a", "b", "c"]``.
- ``StoreOption``, the default action of a ``RepeatCheckingParser``: an option taking several
  values (``nargs="+"``) adds them up the same way; an option taking one value refuses a second,
  different one (``argument --role: given twice with different values, 'a' and 'b'``; a usage
  error, exit 2, before anything runs). The same value twice is accepted.

A command line's options may be read by nested parsers (``commonkeep omp --root A install --root
B``): the options given so far are shared by every parser of one ``parse_known_args`` call.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

# dest -> the value given so far, for the command line being parsed (None: no parse running)
_GIVEN: ContextVar[dict[str, Any] | None] = ContextVar("commonkeep_given_options", default=None)


@contextmanager
def one_command_line() -> Iterator[None]:
    """Within: one command line's parse; the parsers of its sub-commands share what was given."""
    if _GIVEN.get() is not None:
        yield
        return
    token = _GIVEN.set({})
    try:
        yield
    finally:
        _GIVEN.reset(token)


def _earlier(action: argparse.Action, namespace: argparse.Namespace) -> tuple[bool, Any]:
    """Whether ``action``'s option was already given on this command line, and its value so far."""
    given = _GIVEN.get()
    if given is not None:
        return (True, given[action.dest]) if action.dest in given else (False, None)
    current = getattr(namespace, action.dest, None)  # outside a RepeatCheckingParser: the default is untouched
    return current is not None and current is not action.default, current


def _keep(action: argparse.Action, namespace: argparse.Namespace, value: Any) -> None:
    setattr(namespace, action.dest, value)
    given = _GIVEN.get()
    if given is not None:
        given[action.dest] = value


def _added(so_far: Any, items: Sequence[Any]) -> list[Any]:
    out = list(so_far) if isinstance(so_far, list) else []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


class ListOption(argparse.Action):
    """A list option: each occurrence adds its comma-separated items, in order, without duplicates.
    An empty value adds nothing (``--ops ""`` gives ``[]``, which the command can refuse)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        if kwargs.get("nargs") is not None:
            raise ValueError("ListOption takes one (comma-separated) value per occurrence; leave nargs out")
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        items = [item.strip() for item in str(values or "").split(",") if item.strip()]
        seen, so_far = _earlier(self, namespace)
        _keep(self, namespace, _added(so_far if seen else [], items))


class StoreOption(argparse.Action):
    """argparse's ``store``, minus the silent loss: several values add up, one value is given once."""

    def __init__(self, option_strings: Sequence[str], dest: str, nargs: int | str | None = None, **kwargs: Any) -> None:
        if nargs == 0:
            raise ValueError("nargs for store actions must be != 0; use store_true or store_const")
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        if not self.option_strings:  # a positional argument is read once
            setattr(namespace, self.dest, values)
            return
        seen, so_far = _earlier(self, namespace)
        if isinstance(values, list):
            _keep(self, namespace, _added(so_far if seen else [], values))
            return
        if seen and so_far != values:
            raise argparse.ArgumentError(
                self, f"given twice with different values, {_shown(so_far)} and {_shown(values)}; give it once")
        _keep(self, namespace, values)


class RepeatCheckingParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose plain options use ``StoreOption`` (its sub-command parsers too,
    being of the same class unless told otherwise)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOption)
        self.register("action", "store", StoreOption)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        with one_command_line():
            return super().parse_known_args(args, namespace)
