"""The README's examples run, and show what they return (the lines marked ``-- =>``)."""

import json
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def sql_examples() -> list[tuple[str, object | None]]:
    """(statement, what its result must contain) for each statement of the README's sql
    blocks; the expectation is the JSON after ``-- =>`` on the line that follows it."""
    found: list[tuple[str, object | None]] = []
    for block in re.findall(r"```sql\n(.*?)```", README.read_text(), re.S):
        statement: list[str] = []
        for line in block.splitlines():
            if line.startswith("-- =>"):
                sql, expected = found[-1]
                found[-1] = (sql, json.loads(line[len("-- =>"):]))
                continue
            code = re.sub(r"\s+--.*$", "", line) if "'" not in line else line
            statement.append(code)
            if code.rstrip().endswith(";"):
                found.append(("\n".join(statement).strip(), None))
                statement = []
    return found


def contains(got: object, expected: object) -> bool:
    if isinstance(expected, dict):
        return isinstance(got, dict) and all(
            k in got and contains(got[k], v) for k, v in expected.items()
        )
    if isinstance(expected, str) and isinstance(got, str):
        return expected in got
    return got == expected


def test_the_examples_are_there():
    examples = sql_examples()
    assert len(examples) >= 6
    assert sum(expected is not None for _, expected in examples) >= 4


@pytest.mark.parametrize("index", range(len(sql_examples())))
def test_sql_example_runs_and_shows_its_result(conn, superhero, index):
    # Each example runs after the ones before it. The test database has the extension
    # already, so its CREATE EXTENSION runs as IF NOT EXISTS.
    examples = sql_examples()

    def run(sql: str):
        return conn.execute(sql.replace("CREATE EXTENSION ", "CREATE EXTENSION IF NOT EXISTS "))

    try:
        for sql, _ in examples[:index]:
            run(sql)
        sql, expected = examples[index]
        cursor = run(sql)
        if expected is not None:
            got = cursor.fetchone()[0]
            assert contains(got, expected), (sql, got)
    finally:
        conn.execute("RESET search_path")
        for (schema,) in conn.execute("SELECT nspname FROM pg_namespace "
                                      "WHERE nspname LIKE 'siselect\\_instance\\_%'").fetchall():
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
