# ramjet — see README.md. Every target is safe to run on a fresh Debian box.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
export PATH := $(PATH):/usr/local/go/bin

.PHONY: build deb man run test deps lint fuzz bench bench-go bench-quick bench-baseline bench-compare bench-charts bench-report clean

build: bin/ramjet

bin/ramjet: $(shell find . -name '*.go' -not -path './bench/*') go.mod go.sum
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ramjet ./cmd/ramjet

# deb: the Debian package bin/ramjet_<version>_<arch>.deb (deb/build; see
# docs/install.md). Needs dpkg-dev.
deb: bin/ramjet
	deb/build bin/ramjet bin '$(VERSION)'

# man: the man pages (docs/man/*.md to roff) and the configuration
# reference's key table (from conf/ramjet.example.yaml), written again
# after an edit of either; internal/manual's tests fail until then.
man:
	$(GO) generate ./internal/manual

bin/demo-origin: cmd/demo-origin/main.go
	$(GO) build -o bin/demo-origin ./cmd/demo-origin

# run: ramjet on :8080 with embedded defaults, in front of a small demo
# origin on 127.0.0.1:8081. Try: curl -i localhost:8080/ (twice).
run: bin/ramjet bin/demo-origin
	@bin/demo-origin -listen 127.0.0.1:8081 & pid=$$!; \
	trap "kill $$pid 2>/dev/null" EXIT INT TERM; \
	echo "ramjet: http://localhost:8080/  (admin: http://127.0.0.1:9090/metrics)  Ctrl-C stops"; \
	bin/ramjet serve

# test: lint, every test under the race detector (unit, fuzz seeds, end to
# end against real nginx + php-fpm), and the zero-allocation checks, which
# only mean something without -race.
test: deps lint
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run 'Alloc' ./proxy/... ./internal/rawsock/

deps:
	@.ci/deps

# SHELL_SCRIPTS: every shell script; the bench/*.bash parts are sourced by
# bench/run, so shellcheck -x checks them with its variables in view.
SHELL_SCRIPTS := bench/run $(wildcard bench/*.bash) bench/go/guard .ci/deps .ci/run \
	deb/build deb/box deb/postinst deb/prerm deb/postrm

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	shellcheck -x $(SHELL_SCRIPTS)

# fuzz: every fuzz target of every package for FUZZTIME each (default 30s).
FUZZTIME ?= 30s
FUZZPKGS := $(shell grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u | sed 's|^\./||')
fuzz:
	@for p in $(FUZZPKGS); do \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9]*' $$p/*_test.go | cut -d' ' -f2); do \
	    echo "== $$p $$t"; \
	    $(GO) test -run=NONE -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./$$p/ || exit 1; \
	  done; \
	done

# bench: Go benchmarks (store comparison, hit path) then the side-by-side
# wrk run against nginx, nginx fastcgi_cache and Varnish.
bench: bench-go
	bench/run

bench-quick:
	bench/run --quick

# bench-go: every Go benchmark once, for reading (bench/out/go.txt). Some
# need php-cgi or Redis; the regression guard below runs a fixed subset.
bench-go:
	@mkdir -p bench/out
	$(GO) test -run=NONE -bench=. -benchmem -count=1 ./proxy/... ./purge/ | tee bench/out/go.txt

# bench-baseline: run the guarded Go benchmarks (hit path, ESI, purge,
# FastCGI round trip; -count=6, under a minute) into bench/go/baseline.txt.
# bench-compare: run them again and compare with benchstat; fails when a
# benchmark is slower beyond noise (p < 0.05 and > +10 % sec/op) or
# allocates more. BENCH_COMPARE_SELFTEST=1 doubles the new timings to show
# it failing; bench/go/guard selftest checks that in seconds. See bench/README.md.
bench-baseline:
	bench/go/guard baseline

bench-compare:
	bench/go/guard compare

# bench-charts: PNG charts of the last run's records (bench/RESULTS.jsonl)
# into bench/charts/ (gnuplot; measures nothing, so it is quick).
# bench-report: RESULTS.md's tables again from the same records. bench/run
# does both at its end.
bench-charts:
	$(GO) run ./bench/report -records bench/RESULTS.jsonl -charts bench/charts

bench-report:
	$(GO) run ./bench/report -records bench/RESULTS.jsonl -out bench/RESULTS.md

clean:
	rm -rf bin
