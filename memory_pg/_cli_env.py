"""Environment fallbacks of the command line's options: ``MEMORY_PG_*`` read as defaults."""

from __future__ import annotations

import argparse
import os
from typing import Any


def env_flag(name: str) -> bool:
    """A yes/no variable: 1, true, yes or on (any case) is yes."""
    return os.environ.get(name, "").lower() in ("1", "true", "yes", "on")


class EnvDefault(str):
    """An option's default read from the environment variable ``name``.

    argparse converts a string default with the option's type only when that
    command runs, so a bad value fails that command alone, as a usage error (exit
    2) that the type can word with the variable's name.
    """

    name: str

    def __new__(cls, value: str, name: str) -> EnvDefault:
        default = super().__new__(cls, value)
        default.name = name
        return default


def env_default(name: str, default: Any = None) -> Any:
    """The value of ``name`` as an :class:`EnvDefault`, else ``default``."""
    value = os.environ.get(name)
    return EnvDefault(value, name) if value else default


def where(value: str) -> str:
    """A bad value for an error (argparse names the option): with its variable, if from one."""
    return f"{value.name}={str(value)!r}" if isinstance(value, EnvDefault) else repr(value)


def number_type(
    kind: type[int] | type[float], low: float | None = None, high: float | None = None
) -> Any:
    """An option type: a number of ``kind`` from ``low`` to ``high``, else a usage error
    (exit 2) naming the value, whether it is not a number or out of range."""
    noun = "a whole number" if kind is int else "a number"
    if low is not None and high is not None:
        noun += f" from {low:g} to {high:g}"

    def convert(value: str) -> float:
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{where(value)} is not {noun}") from None
        if (low is not None and number < low) or (high is not None and number > high):
            raise argparse.ArgumentTypeError(f"{where(value)} is not {noun}")
        return number

    return convert


__all__ = ["EnvDefault", "env_default", "env_flag", "number_type", "where"]
