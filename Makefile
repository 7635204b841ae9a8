# wai — build, test and check. `make` alone lists the targets.
#
# Every target goes through $(GOTAGS) so the Podman backend is compiled in:
# its bindings do not build without these tags (btrfs and devicemapper
# headers, gpgme). A plain `go build ./...` still works, with the Podman
# backend replaced by a stub that says how to get it.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO        ?= go
GOTAGS    ?= remote exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_openpgp
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -X main.version=$(VERSION)
BIN       := bin/wai
PLUGINDIR := build/plugins

# The whole suite must stay well under CI's budget on 2 cores; a package that
# needs more than this is hung, not slow. host/mcpserver took 9 min under two
# CPU hogs (docs/PERFORMANCE.md, "Test suite"): 12m left too little room.
TEST_TIMEOUT ?= 18m
# Parallel tests (t.Parallel) run this many at once in each package; the
# default is one per CPU. Most of them wait on Podman, ssh, timeouts and
# killed commands rather than use a CPU, and on two cores the default
# queued those waits one after another: plugins/podman took 468 s at 2
# and 351 s at 4 side by side (docs/PERFORMANCE.md, "Test suite").
TEST_PARALLEL ?= 4
TESTFLAGS    ?=
FUZZTIME     ?= 60s
BENCHTIME    ?= 1s
# Pinned and installed by `go install` into build/tools, so nothing has to
# be preinstalled. v0.8.2 is staticcheck 2026.2.2, a release line that knows
# Go 1.26. (Not `go run`: with GOOS=wasip1 set to analyse the plugins, go
# run would build staticcheck itself for wasip1.)
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := build/tools/staticcheck-$(STATICCHECK_VERSION)

# Bundled plugins: every main package under tools/ and policies/, built for
# WASI as a reactor module (-buildmode=c-shared) so the host can call its
# exports. Directories that do not exist yet are skipped.
PLUGIN_ROOTS := $(wildcard tools policies)
PLUGIN_PKGS   = $(if $(PLUGIN_ROOTS),$(shell GOOS=wasip1 GOARCH=wasm $(GO) list -e -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' $(addprefix ./,$(addsuffix /...,$(PLUGIN_ROOTS))) 2>/dev/null))

# Packages with benchmarks or fuzz targets, found by their declarations so a
# new one is picked up without editing this file.
define find_decl
$(shell grep -rlE --include='*_test.go' '^func $(1)[A-Za-z0-9_]*\b' . 2>/dev/null | grep -v '/testdata/' | xargs -r -n1 dirname | sort -u)
endef

.PHONY: help
help: ## list the targets
	@echo "usage: make TARGET"
	@echo
	@grep -hE '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{ printf "  %-10s %s\n", $$1, $$2 }'
	@echo
	@echo "variables: GOTAGS='$(GOTAGS)' TEST_TIMEOUT=$(TEST_TIMEOUT) TEST_PARALLEL=$(TEST_PARALLEL) FUZZTIME=$(FUZZTIME) TESTFLAGS=..."

.PHONY: build
build: $(BIN) ## build every bundled plugin and the agent, and bin/wai carrying them

# bin/wai carries the bundled plugins: a build overlay places each
# build/plugins/NAME.wasm in cmd/wai/bundled/, which cmd/wai embeds
# (cmd/wai/bundled/README.md), so nothing generated enters the tree and a
# copied binary works anywhere.
EMBED_OVERLAY := build/embed-overlay.json

# The same overlay places build/agent/wai-agent in plugins/podman/agentbin/,
# which the podman backend embeds (plugins/podman/agentbin/README.md).
.PHONY: $(BIN)
$(BIN): plugins agent
	@shopt -s nullglob; \
	{ printf '{"Replace":{'; \
	printf '"%s":"%s"' "$(CURDIR)/plugins/podman/agentbin/wai-agent" "$(CURDIR)/$(AGENT)"; \
	for f in $(PLUGINDIR)/*.wasm; do \
		printf ',"%s":"%s"' "$(CURDIR)/cmd/wai/bundled/$${f##*/}" "$(CURDIR)/$$f"; \
	done; printf '}}\n'; } > $(EMBED_OVERLAY)
	$(GO) build -tags "$(GOTAGS)" -trimpath -ldflags "$(LDFLAGS)" -overlay $(EMBED_OVERLAY) -o $(BIN) ./cmd/wai

# wai-agent runs inside the session containers, whatever their image: a
# static binary (no cgo, so no libc needed), for Linux on this machine's
# architecture (that of a local Podman service's containers).
AGENT := build/agent/wai-agent

.PHONY: agent
agent: ## build the in-container agent, build/agent/wai-agent (static)
	@mkdir -p $(dir $(AGENT))
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "-s -w" -o $(AGENT) ./cmd/wai-agent

.PHONY: plugins
plugins: ## build every bundled plugin into build/plugins/NAME.wasm
	@mkdir -p $(PLUGINDIR)
	@pkgs="$(PLUGIN_PKGS)"; \
	if [[ -z "$$pkgs" ]]; then echo "plugins: none under tools/ or policies/ yet"; exit 0; fi; \
	declare -A seen; \
	for p in $$pkgs; do \
		name=$${p##*/}; \
		if [[ -n "$${seen[$$name]:-}" ]]; then \
			echo "plugins: $$p and $${seen[$$name]} would both build $(PLUGINDIR)/$$name.wasm: rename one" >&2; exit 1; \
		fi; \
		seen[$$name]=$$p; \
		echo "plugin  $(PLUGINDIR)/$$name.wasm"; \
		GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -o $(PLUGINDIR)/$$name.wasm $$p; \
	done

.PHONY: demo
demo: ## wai's main job end to end: build, set up Podman (as root), an MCP agent session with a transcript
	GO="$(GO)" GOTAGS="$(GOTAGS)" bash scripts/demo.sh

.PHONY: test
test: ## set up Podman when root, then run every test with the race detector
	@if [[ -f scripts/setup-podman.sh ]]; then \
		if [[ "$$(id -u)" == 0 ]]; then \
			bash scripts/setup-podman.sh; \
		else \
			echo "test: not root, so scripts/setup-podman.sh is not run; the Podman tests skip unless a service already answers" >&2; \
		fi; \
	fi
	@if [[ -f scripts/setup-wasm-toolchain.sh && "$$(id -u)" == 0 ]]; then bash scripts/setup-wasm-toolchain.sh; fi
	$(GO) test -race -tags "$(GOTAGS)" -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) $(TESTFLAGS) ./...

# Packages built for wasip1 (the pdk and the bundled plugins): vetted and
# checked a second time for that platform, where their wasmimport and
# wasmexport code compiles. Without U1000 there: staticcheck does not count
# a //go:wasmexport function as used, and the native run already finds
# dead code in everything that also builds natively.
WASM_PATTERNS = $(foreach d,$(wildcard pdk tools policies),./$(d)/...)

.PHONY: lint
lint: $(STATICCHECK) ## go vet and staticcheck (pinned), natively and for wasip1
	$(GO) vet -tags "$(GOTAGS)" ./...
	$(STATICCHECK) -tags "$(GOTAGS)" ./...
	@if [[ -n "$(WASM_PATTERNS)" ]]; then \
		echo "GOOS=wasip1 GOARCH=wasm: go vet + staticcheck $(WASM_PATTERNS)"; \
		GOOS=wasip1 GOARCH=wasm $(GO) vet $(WASM_PATTERNS); \
		GOOS=wasip1 GOARCH=wasm $(STATICCHECK) -checks 'inherit,-U1000' $(WASM_PATTERNS); \
	fi

$(STATICCHECK):
	@mkdir -p $(@D)
	GOBIN=$(CURDIR)/$(@D)/.install GOOS= GOARCH= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(@D)/.install/staticcheck $@ && rmdir $(@D)/.install

.PHONY: deps
deps: ## check the dependency rules of docs/ARCHITECTURE.md
	$(GO) test -tags "$(GOTAGS)" -count=1 ./internal/depcheck/

.PHONY: fmt
fmt: ## gofmt every Go file in place
	gofmt -w $$(git ls-files '*.go')

.PHONY: check
check: ## gofmt clean, lint and dependency rules
	@unformatted=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt: these files need \`make fmt\`:" >&2; echo "$$unformatted" >&2; exit 1; fi
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory deps

.PHONY: bench
bench: ## run the benchmarks (BENCHTIME=1s) of every package that has some
	@pkgs="$(strip $(call find_decl,Benchmark))"; \
	if [[ -z "$$pkgs" ]]; then echo "bench: no benchmarks yet"; exit 0; fi; \
	$(GO) test -tags "$(GOTAGS)" -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $$pkgs

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (60s)
	@files=$$(grep -rlE --include='*_test.go' '^func Fuzz[A-Z0-9_][A-Za-z0-9_]*[(]' . 2>/dev/null | grep -v '/testdata/' || true); \
	if [[ -z "$$files" ]]; then echo "fuzz: no fuzz targets yet"; exit 0; fi; \
	for f in $$files; do \
		dir=$$(dirname $$f); \
		for fn in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]+)\(.*/\1/p' $$f); do \
			echo "fuzz $$dir $$fn"; \
			$(GO) test -tags "$(GOTAGS)" -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$dir; \
		done; \
	done

.PHONY: clean
clean: ## remove bin/ and build/
	rm -rf bin build
