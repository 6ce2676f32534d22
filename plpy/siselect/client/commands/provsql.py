"""``siselect provsql enable|disable``: a loaded database prepared for ProvSQL."""

import argparse

from siselect.client.options import common


def add_parser(sub) -> None:
    p = sub.add_parser("provsql", help="prepare (or release) a loaded database for ProvSQL")
    p.add_argument("action", choices=["enable", "disable"])
    common(p)


def run(args: argparse.Namespace) -> int:
    from siselect.client.provsql_cmd import run

    return run(args)
