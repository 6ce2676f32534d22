"""The yardstick: BIRD's dev schemas with synthetic data, generated candidate sets, one runner.

Nothing here imports siselect: the package talks to it through ``python3 -m siselect`` only,
so that it measures whatever the CLI of the checkout does.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
TABLES_JSON = DATA / "bird" / "dev_tables.json"
GOLD_JSON = DATA / "siselection" / "bird_corrected.json"
CANDIDATES_DIR = DATA / "siselection" / "candidates"
REAL_DATABASES = DATA / "bird" / "dev_databases"
OUT = ROOT / "bench" / "out" / "yardstick"
