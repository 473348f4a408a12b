# Hearth's commands. 'make run' and 'make test' work on a fresh Debian or Ubuntu machine as root:
# they install what is missing (scripts/setup), build and go on.
.DEFAULT_GOAL := help
SHELL := /bin/bash

# The Swift toolchain is not a Debian package; it is found on PATH or in /opt/swift.
export PATH := $(PATH):/opt/swift/usr/bin

SWIFT ?= swift
VENV := .venv
SETUP_STAMP := $(VENV)/.setup-done
HEARTH := .build/debug/hearth
# One scenario or prefix of hearth-bench ('core' runs every core.*); empty runs all of them.
SCENARIO ?=
# More hearth-bench options, such as --runs 10 or --document-bytes 5000000.
BENCH_FLAGS ?=
# More pytest options, such as -k serve or -x.
PYTEST_FLAGS ?=
# make fuzz: the targets to run (empty: all; see 'scripts/fuzz --list') and for how long each.
FUZZ ?=
FUZZ_SECONDS ?= 60
# How long make test fuzzes each target: long enough to catch a regression in a parser just changed.
TEST_FUZZ_SECONDS ?= 10
# make jokes|social|board|functions: the app's options, e.g. ARGS="--url http://localhost:9000?ns=mine".
ARGS ?=
# make soak: minutes of load per run (one node, then a two-node cluster).
SOAK_MINUTES ?= 60

.PHONY: help run test bench build clean setup fuzz jokes social board functions cluster faults soak

help: ## Show the commands
	@echo "Hearth: a self-hosted Firebase Realtime Database and Auth server."
	@echo
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{ printf "  make %-8s %s\n", $$1, $$2 }'
	@echo
	@echo "  make bench SCENARIO=reference.jsonserialization   runs one scenario (or a prefix such as 'core')"

# Setup runs again only when its script or the Python requirements change, or .venv is gone.
$(SETUP_STAMP): scripts/setup Tests/compat/requirements.txt
	@scripts/setup
	@touch $@

setup: ## Install what is missing (Debian packages, .venv for the compatibility tests)
	@scripts/setup
	@touch $(SETUP_STAMP)

jokes: $(SETUP_STAMP) build ## The jokes app in this terminal, against 'make run' (docs/examples.md)
	@.build/debug/jokes $(ARGS)

social: $(SETUP_STAMP) build ## The social app (profiles, usernames, followers)
	@.build/debug/social $(ARGS)

board: $(SETUP_STAMP) build ## The message board and your posts (works offline)
	@.build/debug/board $(ARGS)

functions: $(SETUP_STAMP) build ## The seed apps' functions beside 'make run': vote totals, top-10 board, follower counts
	@.build/debug/seed-functions $(ARGS)

build: ## Build hearth and hearth-bench (debug)
	@echo "==> swift build"
	@$(SWIFT) build

run: $(SETUP_STAMP) build ## Install, build and serve on http://localhost:9000 with data in ./hearth-data
	@echo "==> hearth serve"
	@$(HEARTH) serve

cluster: $(SETUP_STAMP) build ## A cluster to try: private PostgreSQL, nodes a (:9101) and b (:9102), nginx on :9100 (docs/scaling.md)
	@.venv/bin/python scripts/cluster

test: $(SETUP_STAMP) build ## Install, build and run every test (Swift Testing, pytest on Tests/compat, each fuzzer briefly)
	@SWIFT="$(SWIFT)" HEARTH="$(HEARTH)" TEST_FUZZ_SECONDS="$(TEST_FUZZ_SECONDS)" PYTEST_FLAGS="$(PYTEST_FLAGS)" scripts/test

faults: $(SETUP_STAMP) build ## The cluster under faults: 50 histories of 1,000+ operations checked for linearizability (make test runs 12; docs/reliability.md)
	@HEARTH_BINARY="$(HEARTH)" HEARTH_FAULT_HISTORIES=50 HEARTH_FAULT_SECONDS=1800 $(VENV)/bin/python -m pytest -q -s Tests/compat/test_cluster_faults.py $(PYTEST_FLAGS)

soak: $(SETUP_STAMP) ## An hour of mixed load on one node, then on a two-node cluster: memory, descriptors, threads, p99 each minute (docs/reliability.md)
	@echo "==> swift build -c release --product hearth"
	@$(SWIFT) build -c release --product hearth
	@HEARTH_BINARY=.build/release/hearth $(VENV)/bin/python Tests/compat/soak.py --minutes $(SOAK_MINUTES)
	@HEARTH_BINARY=.build/release/hearth $(VENV)/bin/python Tests/compat/soak.py --minutes $(SOAK_MINUTES) --cluster

fuzz: ## Fuzz every parser of client bytes (FUZZ=json to pick one, FUZZ_SECONDS=600 for longer)
	@scripts/fuzz --seconds $(FUZZ_SECONDS) $(FUZZ)

bench: $(SETUP_STAMP) ## Build hearth-bench and hearth in release and run SCENARIO (all when unset)
	@echo "==> swift build -c release --product hearth-bench --product hearth"
	@$(SWIFT) build -c release --product hearth-bench
	@$(SWIFT) build -c release --product hearth
	@echo "==> hearth-bench $(BENCH_FLAGS) $(SCENARIO)"
	@.build/release/hearth-bench $(BENCH_FLAGS) $(SCENARIO)

clean: ## Remove build products and .venv (never ./hearth-data)
	rm -rf .build Fuzz/.build $(VENV) .pytest_cache Tests/compat/__pycache__
