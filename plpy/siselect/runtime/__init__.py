"""What every stage stands on: the executor interface and its PL/Python implementation,
the checks every text passes before it runs (``pgcheck``, ``callpolicy``, ``blocklist``),
the catalog and column privileges, errors with SQLSTATEs, canonical values and answers,
row ids, deadlines, answer sizes and redaction."""
