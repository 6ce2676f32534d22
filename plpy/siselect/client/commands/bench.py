"""``siselect bench``: selection measured on BIRD-format tasks."""

import argparse


def add_parser(sub) -> None:
    from siselect.client.bench.run import add_parser

    add_parser(sub)


def run(args: argparse.Namespace) -> int:
    from siselect.client.bench.run import bench_command

    return bench_command(args)
