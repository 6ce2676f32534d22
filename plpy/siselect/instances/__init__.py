"""Stage 3 of the pipeline: separating instances D' (paper section II).

``separate`` orchestrates: both queries on D, witness pools (``backends``, over
:mod:`siselect.witnesses`), proposals (``search``), verification on D' without writing
(``pair``, ``shadow``, ``ties``), 1-minimal instances (``minimise``), the rows referenced
through foreign keys (``references``), instances as JSON, Markdown or SQL (``render``) and
written into a schema (``materialize``).
"""
