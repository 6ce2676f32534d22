"""siselect: data-aware selection among candidate SQL queries.

The core is pure Python: it talks to PostgreSQL only through an :class:`Executor`
handed to it, so the same code runs inside the server (PL/Python) and in the client.
"""

__version__ = "0.2.0"
