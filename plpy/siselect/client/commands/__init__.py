"""One module per subcommand, each with ``add_parser(sub)`` and ``run(args)``; the
table in :mod:`siselect.client.cli` lists them. No command imports the dispatcher."""
