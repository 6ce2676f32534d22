"""``siselect plot``: figures from bench runs."""

import argparse


def add_parser(sub) -> None:
    from siselect.client.plot import add_parser

    add_parser(sub)


def run(args: argparse.Namespace) -> int:
    from siselect.client.plot import plot_command

    return plot_command(args)
