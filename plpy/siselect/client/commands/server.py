"""``siselect server start|status|stop|dsn``: the embedded PostgreSQL."""

import argparse

from siselect.client.exit_codes import NOT_RUNNING, epilog
from siselect.client.options import info


def add_parser(sub) -> None:
    p = sub.add_parser("server", help="start, inspect or stop the embedded PostgreSQL",
                       epilog=epilog([NOT_RUNNING]),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=["start", "status", "stop", "dsn"],
                   help="dsn: print the DSN of the running cluster")
    p.add_argument("--admin", action="store_true",
                   help="print the superuser's DSN (loading, administration) instead of the "
                   "runner role's, which candidates run as")
    p.add_argument("--provsql", action=argparse.BooleanOptionalAction, default=None,
                   help="preload ProvSQL at start (default: where it is installed)")


def run(args: argparse.Namespace) -> int:
    from siselect.client.embedded import cluster, ready

    local = cluster(args.provsql if args.action == "start" else False)

    def dsn() -> str:  # names the passfile; no password in it
        return local.dsn() if args.admin else local.runner_dsn()

    if args.action == "start":
        preload = local.settings.get("shared_preload_libraries")
        started, _ = ready(local)
        info(("started" if started else "already running")
             + (f" (preloading {preload})" if preload else ""))
        info(f"data directory: {local.datadir}; passwords: {local.passfile}")
        print(dsn())
        return 0
    if args.action in ("status", "dsn"):
        if local.running():
            if args.action == "status":
                print(f"running on port {local.port()}, data directory {local.datadir}")
            print(dsn())
            return 0
        message = f"not running (data directory {local.datadir})"
        info(message) if args.action == "dsn" else print(message)
        return NOT_RUNNING
    print("stopped" if local.stop() else "not running")
    return 0
