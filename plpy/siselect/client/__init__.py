"""The client side: psycopg executor, embedded server, SQLite loader and CLI."""
