"""The yardstick: BIRD's dev schemas with synthetic data, generated candidate sets, one runner.

What is measured runs through ``python3 -m siselect`` only, so that it measures whatever the
CLI of the checkout (or of ``--at COMMIT``) does; only the figures' definitions are imported
(``siselect.client.bench.metrics`` of the work tree, in :mod:`.figures`) and the plot helpers.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
TABLES_JSON = DATA / "bird" / "dev_tables.json"
GOLD_JSON = DATA / "siselection" / "bird_corrected.json"
CANDIDATES_DIR = DATA / "siselection" / "candidates"
REAL_DATABASES = DATA / "bird" / "dev_databases"
OUT = ROOT / "bench" / "out" / "yardstick"
if str(ROOT / "plpy") not in sys.path:  # the work tree's siselect, installed or not
    sys.path.append(str(ROOT / "plpy"))
