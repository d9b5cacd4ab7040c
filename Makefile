# SPDX-License-Identifier: GPL-2.0
# toptier: top-tier memory control for tiered-memory Linux machines.
# Run "make help" for the targets.

SHELL := /bin/bash
S := scripts

# Quick path: make test T="topology demotion/in_lieu_of_discard" TOPO=2tier
T ?=
TOPO ?=

.PHONY: tierstat help deps tree kernel kernel-debug kernel-baseline tests check test stress peer selftests demo shell bench bisect-check export checkpatch clean

# make stress: DURATION seconds per boot (v2, then v1), SEED to repeat a run.
DURATION ?= 300
SEED ?=

help:
	@echo "toptier make targets:"
	@echo "  deps             install the Debian packages and the pinned kernel source"
	@echo "  kernel           build the patched guest kernel; prints its bzImage path last"
	@echo "  kernel-debug     the patched kernel with config/debug.config (KASAN, lockdep, ...)"
	@echo "  kernel-baseline  the same configuration without the series"
	@echo "  check            everything: deps, kernels, checkpatch, all tests in QEMU, peer suite"
	@echo "  test T=.. TOPO=..  run some tests (areas or area/name) on one topology"
	@echo "  stress DURATION=s SEED=n  the stress tests on the debug kernel, longer"
	@echo "  demo             boot the tiered VM and show tiers, demotion and promotion"
	@echo "  shell            interactive shell in the tiered VM (TOPO=3tier for three tiers)"
	@echo "  peer             upstream cgroup and mm selftests, baseline vs patched"
	@echo "  bench            benchmarks against the baseline kernel (docs/benchmarks.md)"
	@echo "  export           write the work tree's commits back into patches/"
	@echo "  tierstat         build tools/tierstat/tierstat (see tierstat.1)"
	@echo "  checkpatch       scripts/checkpatch.pl over every patch of the series"
	@echo "  bisect-check     build the kernel at every patch and boot each once (long)"
	@echo "Big files live in \$$TOPTIER_CACHE (default ~/.cache/toptier)."

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/prepare-tree.sh

kernel: deps
	@$(S)/build-kernel.sh toptier

kernel-debug: deps
	@DEBUG=1 $(S)/build-kernel.sh toptier

kernel-baseline: deps
	@$(S)/build-kernel.sh baseline

tests:
	@$(MAKE) -s -C tests O=$(CURDIR)/build/tests

tierstat:
	@$(MAKE) -s -C tools/tierstat

checkpatch: tree
	@$(S)/checkpatch-series.sh

check: deps
	@$(S)/selftest-runner.sh
	@$(MAKE) -s -C tools/tierstat check
	@$(S)/checkpatch-series.sh
	@$(S)/run-tests.sh -d -p -P -j 2

test: deps
	@$(S)/run-tests.sh $(if $(TOPO),-t $(TOPO)) $(T)

stress: deps
	@TOPTIER_GUEST_ARGS="toptier.stress_seconds=$(DURATION)$(if $(SEED), toptier.seed=$(SEED))" \
	 TOPTIER_TIMEOUT_EXTRA=$$((2 * $(DURATION))) \
	 $(S)/run-tests.sh -K "$$(DEBUG=1 $(S)/build-kernel.sh toptier | tail -1)" \
		reliability/stress_v2 reliability/stress_v1 toptier/kswapd_round_v1

# Also a job of check (run-tests.sh -P).  K= and B= take ready bzImages (patched,
# baseline) instead of building them.
peer: deps
	@$(S)/run-peer.sh $(if $(K),-K $(K)) $(if $(B),-B $(B))

selftests: deps
	@$(S)/build-selftests.sh

demo: deps
	@$(S)/demo.sh $(if $(TOPO),-t $(TOPO))

shell: deps
	@$(S)/shell.sh $(if $(TOPO),-t $(TOPO))

bench: deps
	@bench/run.sh

bisect-check: deps
	@$(S)/bisect-check.sh

export:
	@$(S)/export-series.sh

clean:
	rm -rf build results
