# memdecay: the SQLite extension (build/memdecay.so) and the worker (build/memworker).

GO       ?= go
BUILD    := build
SO       := $(BUILD)/memdecay.so
WORKER   := $(BUILD)/memworker
# mattn/go-sqlite3 leaves out SQLite's math functions (exp, ln) unless asked;
# the plain-SQL benchmark peer needs them.
TAGS     := sqlite_math_functions
FUZZTIME ?= 10s
SOURCES  := $(shell find . -name '*.go' -o -name '*.c' -o -name '*.h' -o -name '*.sql' | grep -v _test.go) go.mod go.sum

export CGO_ENABLED := 1

.DEFAULT_GOAL := help
.PHONY: help build install generate demo demo-cluster test lint unit wheel npm dist test-dist fuzz bench clean

help: ## List the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

build: $(SO) $(WORKER) ## Build build/memdecay.so and build/memworker

$(SO): $(SOURCES)
	$(GO) build -buildmode=c-shared -tags memdecay_loadable,$(TAGS) -o $@ ./ext
	@rm -f $(BUILD)/memdecay.h

$(WORKER): $(SOURCES)
	$(GO) build -tags $(TAGS) -o $@ ./cmd/memworker

PREFIX ?= /usr/local

install: build ## Install memworker into $(PREFIX)/bin and memdecay.so into $(PREFIX)/lib/memdecay
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/memdecay
	install -m 0755 $(WORKER) $(DESTDIR)$(PREFIX)/bin/memworker
	install -m 0644 $(SO) $(DESTDIR)$(PREFIX)/lib/memdecay/memdecay.so

generate: ## Rewrite ext/shim/registry.h from the function registry (ext/shim/registry.go)
	$(GO) generate ./ext/shim

demo: build ## Run the main job on the embedded sample memory graph
	$(WORKER) demo

demo-cluster: build ## Run the demo against a 3-node rqlite cluster on loopback
	$(GO) run ./internal/rqcluster/demo -memworker $(abspath $(WORKER)) -extension $(abspath $(SO))

lint: ## gofmt, go vet and go mod tidy must be clean
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet -tags $(TAGS) ./...
	$(GO) mod tidy -diff
	@grep -qE '^go [0-9]+\.[0-9]+$$' go.mod || { echo "go.mod: the go line must name a language version without a patch level (so importing ext/shim does not raise a consumer's Go)"; exit 1; }

# The worker's sweep tests take over go test's default 10 minutes under
# -race on a slow 2-core machine.
unit: $(SO) ## Every Go, integration and sweep test (with -race)
	MEMDECAY_SO=$(abspath $(SO)) $(GO) test -race -timeout 60m -tags $(TAGS) -count=1 ./...

.PHONY: prereqs
prereqs: ## Check the tools make test needs; as root, install the missing ones (scripts/prereqs.sh)
	GO=$(GO) bash scripts/prereqs.sh

test: prereqs lint unit test-arm64 test-dist ## Everything CI runs: the tools checked, lint, every test (amd64 and arm64), then the packages installed and used

wheel: ## Write dist/: this machine's platform alone (linux-amd64 or linux-arm64), its memdecay.so, memworker and wheel; no cross compiler
	GO=$(GO) bash packaging/dist.sh wheel

npm: ## Write dist/: this machine's platform alone, its memdecay.so, memworker and the npm package holding its library; no cross compiler
	GO=$(GO) bash packaging/dist.sh npm

dist: ## Write dist/: memdecay.so and memworker for linux/amd64 and linux/arm64, memdecay.dll for windows/amd64, a wheel per Linux platform, the npm package, SHA256SUMS
	GO=$(GO) bash packaging/dist.sh

test-dist: dist ## Install the wheels and the npm package and use them; the arm64 files under qemu, the Windows DLL under wine
	MEMDECAY_DIST=$(abspath dist) $(GO) test -tags dist,$(TAGS) -count=1 ./packaging

.PHONY: test-arm64
test-arm64: ## The formulas' and the shim's tests built for linux/arm64 and run under qemu (same bits as amd64)
	GO=$(GO) bash scripts/test-arm64.sh

fuzz: ## Run each fuzz target for FUZZTIME (default 10s)
	@for pkg in ./sqlfuncs ./ext/shim; do \
	  for f in $$($(GO) test -tags $(TAGS) -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    $(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench: build ## Benchmarks against the peers (not part of make test); appends to bench/RESULTS.md
	MEMDECAY_SO=$(abspath $(SO)) $(GO) test -tags $(TAGS) -run '^$$' -bench . -benchtime 3x -count 3 ./ext/shim ./ext
	$(GO) run -tags $(TAGS) ./bench/run -out bench/RESULTS.md

clean: ## Remove build outputs
	rm -rf $(BUILD) dist
