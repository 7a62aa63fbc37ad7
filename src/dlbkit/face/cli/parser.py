"""The parser of the ``dlbkit`` command line: argparse with dlbkit's one-line errors, negative numbers
read as values, and a command's arguments added only when that command runs."""

from __future__ import annotations

import argparse
import re
from typing import Callable

__all__ = ["Parser", "add_command"]

#: what is a value, not an option, when it follows an option that takes one: "-" then a digit, ".digit",
#: inf or nan. argparse's own pattern before Python 3.13 takes only -12 and -1.5, so `--emulate -1e-09`
#: (or -1,0.5, or --rate -inf) was "--emulate: expected one argument" and the value never reached
#: dlbkit's own check, which names --emulate[0] and what it must be. No dlbkit option looks like this.
_NEGATIVE_NUMBER = re.compile(r"^-(\.?\d|inf|nan)", re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    """argparse with the one-line error format of every other dlbkit error (still exit status 2), and
    negative numbers in any float spelling read as values (:data:`_NEGATIVE_NUMBER`).

    *arguments*, a function of the parser, adds a command's arguments when the parser first parses
    (:func:`~dlbkit.face.cli.build_parser` with ``lazy=True``): a command's arguments may need its engine
    imported (a list of names for a help text or choices), which only the command that runs needs."""

    def __init__(self, *args, arguments: Callable[[argparse.ArgumentParser], None] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._arguments = arguments
        # argparse's own attribute (3.8 to 3.14 at least); were it gone, this would only have no effect,
        # and a test would say so
        # (runtime/test_emulate_speeds_fuzz.py::test_a_negative_factor_after_the_flag_reaches_dlbkits_check)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def parse_known_args(self, args=None, namespace=None):
        # argparse parses a command's arguments with this method of the command's parser, after
        # parse_args chose the command (the main parser calls it too, and has no arguments to add)
        if self._arguments is not None:
            add, self._arguments = self._arguments, None
            add(self)
        return super().parse_known_args(args, namespace)

    def _parse_optional(self, arg_string):
        # argparse tries an option's prefix before the negative-number test: "-NaN" was -N with the value
        # "aN" where a command has -N (bench, run, cluster), so `--load -NaN` was "expected one argument"
        # and -N was set to "aN". A whole option string is still an option
        # (test_cli.py::test_minus_nan_after_an_option_is_a_value_not_the_short_option_n)
        if _NEGATIVE_NUMBER.match(arg_string) and arg_string not in self._option_string_actions:
            return None
        return super()._parse_optional(arg_string)

    def error(self, message: str):
        self.exit(2, f"dlbkit: error: {message} (see '{self.prog} --help')\n")


def add_command(sub, name: str, arguments: Callable[[argparse.ArgumentParser], None], lazy: bool,
                **kwargs) -> None:
    """The command *name* (*kwargs*: its help and description), its arguments added by *arguments*
    now or, *lazy*, when the command runs (:class:`Parser`)."""
    parser = sub.add_parser(name, arguments=arguments if lazy else None, **kwargs)
    if not lazy:
        arguments(parser)
