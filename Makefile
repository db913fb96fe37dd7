# Every target works from a fresh clone: it builds the virtualenv and fetches
# MNIST itself when needed. Python comes from .venv only.
PY      := .venv/bin/python
STAMP   := .venv/.installed-stamp
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1

.PHONY: setup data test bench demo system-deps lint format docs docs-reference docs-examples

# A venv made over one from another python3 (say pyenv's over Debian's) mixes
# the two interpreters' files and breaks (its ssl module fails to load): such a
# venv is made again from scratch; otherwise it is updated in place.
$(STAMP): pyproject.toml
	@if [ -x .venv/bin/python ] && [ "$$(.venv/bin/python -c 'import sys; print(sys.version)' 2>/dev/null)" \
	     != "$$(python3 -c 'import sys; print(sys.version)')" ]; then \
	  echo ".venv was made by another python3: making it again"; rm -rf .venv; fi
	python3 -m venv .venv
	.venv/bin/pip install --quiet --upgrade pip
	.venv/bin/pip install --quiet -e '.[server,dev]'
	touch $@

setup: $(STAMP)

# MNIST into data/ (git-ignored): $$MNIST_DIR, else ../shared/data/mnist, else download.
data:
	@python3 reference/tools/fetch_mnist.py data --fallback ../shared/data/mnist

# ruff: lint and format (configured in pyproject.toml); `make format` rewrites.
lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: setup
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

# System packages the tests use (sandbox, browser); installed only when missing.
system-deps:
	@./tools/system-deps.sh

# The suite in two phases: all but the `exclusive` tests two at a time
# (pytest-xdist, one test file per process: a file's fixtures are built
# once), then the `exclusive` ones alone, which starve the machine on
# purpose or time it. Both phases run whatever the first one gave.
test: setup data system-deps docs lint
	$(PY) -m grader check-handout reference handout
	status=0; \
	$(PY) -m pytest -n 2 --dist loadfile -m "not exclusive" tests || status=$$?; \
	$(PY) -m pytest -m exclusive tests || status=$$?; \
	exit $$status

# The docs site (mkdocs, material theme) into site/ (git-ignored); --strict fails on any warning.
# The generated pages are checked fresh first: commands from the CLI's parser.
docs: setup
	$(PY) tools/docs_reference.py --check
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# Regenerate the generated parts of the docs, then commit them.
docs-reference: setup
	$(PY) tools/docs_reference.py

docs-examples: setup data
	$(PY) tools/docs_examples.py

bench: setup data system-deps
	$(PY) -m benchmarks

demo: setup data
	$(PY) -m grader demo

# --- handout (instructor) ---
.PHONY: handout check-handout
handout: setup data
	$(PY) -m grader handout reference handout

check-handout: setup
	$(PY) -m grader check-handout reference handout

# --- grading ---
.PHONY: grade
SUBMISSION ?=
OUT ?= out
grade: setup data
	$(PY) -m grader grade $(if $(SUBMISSION),"$(SUBMISSION)") --out "$(OUT)"

# --- server ---
# make serve [DB=sqlite:///grader.db] [HOST=127.0.0.1] [PORT=8000]
# make publish KEY=instructor-key [SERVER=http://127.0.0.1:8000/]
#   (or MUGRADE_KEY=... make publish). The key reaches the client through the
#   environment only: no command line printed or run here contains it.
.PHONY: serve publish
DB     ?= sqlite:///grader.db
HOST   ?= 127.0.0.1
PORT   ?= 8000
SERVER ?= http://$(HOST):$(PORT)/
KEY    ?= $(MUGRADE_KEY)
serve: setup
	@echo "Grading server at http://$(HOST):$(PORT)/ (database $(DB)). Open in a browser:"
	@echo "  http://$(HOST):$(PORT)/login      sign in with your key"
	@echo "  http://$(HOST):$(PORT)/gradebook  instructors: the class gradebook"
	@echo "  http://$(HOST):$(PORT)/me         students: their own results"
	$(PY) -m grader serve --db "$(DB)" --host "$(HOST)" --port "$(PORT)"

publish: export MUGRADE_KEY := $(KEY)
publish: setup data
	@test -n "$$MUGRADE_KEY" || { echo "usage: make publish KEY=instructor-key [SERVER=$(SERVER)]"; exit 2; }
	@echo "$(PY) -m grader publish --server \"$(SERVER)\"   (key from KEY, not shown)"
	@$(PY) -m grader publish --server "$(SERVER)"
