# sluice: build, demo, test and benchmark. Everything it needs is built into ./bin.
GO      ?= go
BIN     := $(CURDIR)/bin
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
SF      ?= 0.01
DATA    ?= $(CURDIR)/.tmp/tpch-sf$(SF)

export SLUICE_MINIO_BIN := $(BIN)/minio

.PHONY: all build demo test test-long test-tpch test-tpcds bench-tpcds test-faults fuzz bench bench-aqe bench-shuffle bench-coordinator bench-sim bench-planner bench-groupby vet clean function bench-invoke images test-deploy

all: build

# A pinned MinIO server, built once from the Go module proxy and reused.
$(BIN)/minio:
	@mkdir -p $(BIN)
	@echo "building MinIO $(MINIO_VERSION) into ./bin (first time only, a few minutes)"
	GOBIN=$(BIN) $(GO) install github.com/minio/minio@$(MINIO_VERSION)

build: $(BIN)/sluice

# The AWS Lambda Runtime Interface Emulator, pinned, for the Lambda
# end-to-end test and bench-invoke (one emulator process per function slot).
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
$(BIN)/aws-lambda-rie:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

# The lean function binary as an AWS Lambda `bootstrap` (provided.al2023)
# for amd64 and arm64: pure Go, stripped, zipped when zip is installed
# (`sluice deploy lambda --zip` also takes the bare bootstrap).
LAMBDA_ARCHS := amd64 arm64
function:
	@for arch in $(LAMBDA_ARCHS); do \
		mkdir -p $(BIN)/lambda/$$arch && rm -f $(BIN)/lambda/$$arch/function.zip; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -tags lambda.norpc -ldflags '-s -w' \
			-o $(BIN)/lambda/$$arch/bootstrap ./cmd/sluice-function || exit 1; \
		if command -v zip >/dev/null; then (cd $(BIN)/lambda/$$arch && zip -q -X function.zip bootstrap); fi; \
	done
	@for f in $(foreach a,$(LAMBDA_ARCHS),$(BIN)/lambda/$(a)/bootstrap $(BIN)/lambda/$(a)/function.zip); do \
		[ -f $$f ] && stat -c '%n %s' $$f | awk '{sub(".*/bin/", "bin/", $$1); printf "%-30s %9d bytes %6.1f MiB\n", $$1, $$2, $$2/1048576}'; \
	done; true

$(BIN)/sluice: FORCE
	@mkdir -p $(BIN)
	@echo "building bin/sluice: the first build compiles the Postgres SQL parser (libpg_query, C via cgo)"
	@echo "  and the AWS, Arrow and Parquet modules: about 5 CPU-minutes, 15 min on 2 busy cores; seconds after"
	$(GO) build -o $(BIN)/sluice ./cmd/sluice

FORCE:

$(DATA)/lineitem:
	$(BIN)/sluice tpch gen --sf $(SF) --out $(DATA)

# The main job on the embedded stack: MinIO + miniredis + in-process functions.
demo: build $(BIN)/minio
	@$(MAKE) --no-print-directory $(DATA)/lineitem
	$(BIN)/sluice local demo --data $(DATA) --serve

# All tests but the long ones: unit, end-to-end against a real MinIO,
# miniredis and (when redis-server is installed) a real Redis, every answer
# checked against DuckDB. Under 10 minutes on two idle cores; the go test
# timeout is a hang guard far above that, not a schedule (a loaded machine
# takes longer and still passes). Prints each package's time.
LONG_TESTS = TestTPCDS|TestLambdaFunctions|TestCombineObjectsScanReader|TestLocalQueryUnderLoad
# Run by make test-tpcds only: the 99 TPC-DS queries over the Postgres protocol.
TPCDS_ONLY_TESTS = TestPGWireTPCDS
# Every test run overwrites the scan buffers it recycles when their batch
# is released (function.PoisonFreedEnv): an operator reading a batch after
# releasing it fails the tests' answer checks instead of passing by luck.
test test-long test-tpch test-tpcds test-faults fuzz: export SLUICE_POISON_FREED := 1
test: $(BIN)/minio $(BIN)/aws-lambda-rie
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 60m -skip '^($(LONG_TESTS)|$(TPCDS_ONLY_TESTS))$$' ./...

# The long tests (.ci/run runs them after make test): TPC-DS's 99 queries
# at SF 0.01 adaptive and static, functions behind the Lambda runtime
# emulator, a scan of many row groups through a combining stage, 20 runs of
# `sluice local query` while other processes keep every core busy; then
# the core packages under the race detector.
test-long: $(BIN)/minio $(BIN)/aws-lambda-rie
	$(GO) test -count=1 -timeout 60m -run '^($(LONG_TESTS))$$' ./tests/
	$(GO) test -count=1 -race -timeout 30m ./planner/... ./coordinator/... ./shuffle/... ./function/...

# The TPC-H queries at SF 1 (BENCH_SF) on the embedded stack, against DuckDB
# on the same files in the same run.
BENCH_SF ?= 1
# Then the latency section: trivial queries on a warm stack at SF 0.01,
# the median of 10 against DuckDB's (BenchmarkLatency).
bench: $(BIN)/minio bench-shuffle
	$(GO) test -run '^$$' -bench 'BenchmarkTPCH|BenchmarkLatency' -benchtime 1x -timeout 60m ./tests/ -args -sf $(BENCH_SF)

# GROUP BY shapes and global count/min/max over a GROUPBY_ROWS-row table
# written by DuckDB (dictionary-encoded strings, 122,880-row row groups),
# each answer checked against DuckDB, both times and the ratio printed.
GROUPBY_ROWS ?= 10000000
bench-groupby: $(BIN)/minio
	$(GO) test -run '^$$' -bench BenchmarkGroupBy -benchtime 1x -timeout 30m ./tests/ -args -groupby-rows $(GROUPBY_ROWS)

# Planning a 60,000-value IN list, against parsing the same text in the
# same run (x_parse).
bench-planner:
	$(GO) test -run '^$$' -bench BenchmarkPlanLongInList -benchtime 5x ./planner/

# Shuffle writer + reader vs raw MinIO PUT/GET of the same bytes, in the
# same run: SHUFFLE_MIB MiB of TPC-H lineitem batches per iteration, lz4
# and zstd, unsigned and SHA-256-signed payloads, the ratio printed.
SHUFFLE_MIB ?= 32
bench-shuffle: $(BIN)/minio
	$(GO) test -run '^$$' -bench BenchmarkShuffleThroughput -benchtime 3x -timeout 20m ./shuffle/ -args -shuffle-mib $(SHUFFLE_MIB)

# Adaptive on vs off: the TPC-H queries, a skewed join and a LIMIT, at BENCH_SF.
bench-aqe: $(BIN)/minio
	$(GO) test -run '^$$' -bench BenchmarkAQE -benchtime 1x -timeout 60m ./tests/ -args -sf $(BENCH_SF)

# Scale: TPC-H at SCALE_SF (default SF 10, data generated once under .tmp)
# on 4 functions of SCALE_MEM (default 512MiB), DuckDB on the same files in
# the same run; prints per query both times, whether the answer equals
# DuckDB's, peak task memory against the budget, bytes spilled, S3
# requests by verb, functions invoked and $, then totals (SCALE_QUERIES:
# all or a list). `make bench-scale SCALE_SF=0.1 SCALE_MEM=4MiB` forces
# spilling at a small scale.
SCALE_SF ?= 10
SCALE_MEM ?= 512MiB
SCALE_QUERIES ?= all
bench-scale: $(BIN)/minio
	$(GO) test -run '^$$' -bench BenchmarkSpill -benchtime 1x -timeout 180m ./tests/ -args -sf $(SCALE_SF) \
		-spill-function-memory $(SCALE_MEM) -spill-queries $(SCALE_QUERIES)

# Per-invocation latency (p50/p99) of no-op and real tasks through each
# invoker: in-process pool, HTTP function processes, Lambda under the RIE.
# INVOKE_N tasks of each kind per invoker.
INVOKE_N ?= 200
bench-invoke: $(BIN)/minio $(BIN)/aws-lambda-rie
	$(GO) test -run '^$$' -bench BenchmarkInvoke -benchtime 1x -timeout 30m ./tests/ -args -invoke-n $(INVOKE_N)

# All 22 TPC-H queries against DuckDB at a larger scale factor (SF=0.1).
test-tpch: $(BIN)/minio
	$(GO) test -count=1 -run 'TestTPCH' -timeout 30m ./tests/ -args -sf $(SF)

# DuckDB's 99 TPC-DS queries on the embedded stack against DuckDB, adaptive
# and static, at TPCDS_SF (dsdgen data cached under .tmp; the tpcds extension
# is linked once from the duckdb-go bindings with g++). Prints the tally of
# passes, refusals (SL005) and wrong answers. Then the same 99 over the
# Postgres protocol (TestPGWireTPCDS: pgx, simple and extended protocol),
# each answer against DuckDB.
TPCDS_SF ?= 1
test-tpcds: $(BIN)/minio
	$(GO) test -count=1 -run '^TestTPCDS$$' -timeout 60m -v ./tests/ -args -tpcds-sf $(TPCDS_SF)
	$(GO) test -count=1 -run '^TestPGWireTPCDS$$' -timeout 60m -v ./tests/ -args -tpcds-sf $(TPCDS_SF)

# The TPC-DS queries sluice runs, sluice vs DuckDB per query and in total.
bench-tpcds: $(BIN)/minio
	$(GO) test -run '^$$' -bench BenchmarkTPCDS -benchtime 1x -timeout 60m ./tests/ -args -tpcds-sf $(TPCDS_SF)

# The long fault-injection and load tests: kill -9 of coordinators at 60+
# points, coordinators racing and paused past their lease, function faults
# in every TPC-H query, S3 faults through a proxy and MinIO restarts, Redis
# restarts, 20 concurrent jobs on both Redis backends (the coordinator's
# unit tests under the race detector run in make test-long). SEED=n
# replays a run.
SEED ?= 0
test-faults: $(BIN)/minio
	$(GO) test -count=1 -run 'TestFault|TestLoad' -timeout 60m -v ./tests/ -args -long -seed $(SEED)

# The differential and metamorphic SQL fuzzer (tests/fuzz_test.go): FUZZ_N
# generated queries against DuckDB and FUZZ_CHECKS TLP/NoREC checks from a
# random seed (FUZZ_SEED=n replays one). Prints the counts (generated,
# compared, matched, mismatched, refused by construct, checks, internal
# errors) and writes every failure, shrunk, to tests/testdata/fuzz/.
# `make test` runs a fixed-seed sample of it (TestFuzzSample).
FUZZ_N      ?= 2000
FUZZ_CHECKS ?= 500
FUZZ_SEED   ?= 0
fuzz: $(BIN)/minio
	$(GO) test -count=1 -run 'TestFuzzLong' -timeout 300m -v ./tests/ -args -fuzz-n $(FUZZ_N) -fuzz-checks $(FUZZ_CHECKS) -fuzz-seed $(FUZZ_SEED)

# The coordinator alone against a real redis-server: task transitions per
# second for a stage of 10,000 tasks, Redis round trips per task, raw INCR
# throughput in the same run.
# Simulation (local/sim): TPC-H at SIM_SF on virtual tables through the
# real coordinator and a redis-server, with Lambda and S3 modelled, time
# compressed SIM_FACTOR times; then a 10,000-task scan stage under
# throttling, stragglers and crashes; a scan stage of 19 MiB splits feeding
# a 2,000-partition shuffle at SIM_SHUFFLE_SF (100: 964 tasks; 1,000: 9,634),
# adaptive, so combine-objects puts a combining stage before the readers
# (SIM_REAL_FLOOR raises the real-time floor of the deadlines on a loaded
# machine; see docs/architecture.md Scale); then one big job beside
# 20 small ones without and with fair sharing, and with admission control
# (SIM_MAX_JOBS). Prints per query the simulated latency, functions, peak and
# sustained concurrency, 429s, 503s, retries, requests and peak rates per
# prefix, Redis commands, peak ops/s and peak memory, the coordinator's CPU (apart
# from the models'), RSS and $, with totals and CPU per task.
SIM_SF ?= 1000
SIM_FACTOR ?= 100
SIM_CONCURRENCY ?= 3000
# The modelled account's concurrency of the 10,000-task scan step (below
# SIM_CONCURRENCY, so Lambda throttles and the coordinator's limit follows it).
SIM_ACCOUNT ?= 1000
SIM_SHUFFLE_SF ?= 100
SIM_MAX_JOBS ?= 4
SIM_REAL_FLOOR ?= 0
SIM_FLAGS = --log-level error sim --sim-sf $(SIM_SF) --sim-factor $(SIM_FACTOR) --function-memory 1769MiB
bench-sim:
	$(GO) build -o $(BIN)/sluice ./cmd/sluice
	$(BIN)/sluice $(SIM_FLAGS) --query-dir planner/testdata/tpch --functions $(SIM_CONCURRENCY) --lambda-concurrency $(SIM_CONCURRENCY)
	$(BIN)/sluice $(SIM_FLAGS) --adaptive=false --split-bytes 19MiB --functions $(SIM_CONCURRENCY) --lambda-concurrency $(SIM_ACCOUNT) \
		--straggler-rate 0.05 --crash-rate 0.02 "select count(*) from lineitem"
	$(BIN)/sluice $(SIM_FLAGS) --sim-sf $(SIM_SHUFFLE_SF) --max-split-bytes 0 --split-bytes 19MiB --partitions 2000 --real-floor $(SIM_REAL_FLOOR) \
		--functions $(SIM_CONCURRENCY) --lambda-concurrency $(SIM_CONCURRENCY) --straggler-rate 0.05 --crash-rate 0.02 "select l_orderkey, count(*) from lineitem group by l_orderkey"
	$(BIN)/sluice $(SIM_FLAGS) --adaptive=false --split-bytes 19MiB --functions 1000 --lambda-concurrency 1000 \
		--mix-small 20 --mix-after 30s --max-jobs $(SIM_MAX_JOBS) "select count(*) from lineitem"
	$(BIN)/sluice $(SIM_FLAGS) --sim-sf $(SIM_SHUFFLE_SF) --functions 1000 --lambda-concurrency 1000 \
		--function-sizes 512MiB,1769MiB,3538MiB --compare-sizes --query-dir planner/testdata/tpch

bench-coordinator:
	$(GO) test -run '^$$' -bench BenchmarkCoordinator -benchtime 1x ./coordinator/

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || (gofmt -l .; exit 1)

clean:
	rm -rf $(BIN)/sluice .tmp

# Container images of the coordinator (cgo, static) and the HTTP function,
# with docker or podman; IMAGE_REPO and IMAGE_TAG name them.
IMAGE_REPO ?= sluice
IMAGE_TAG  ?= dev
CONTAINER  ?= $(shell command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 && echo docker || (command -v podman >/dev/null 2>&1 && echo podman))
images:
	@if [ -z "$(CONTAINER)" ]; then \
		echo "make images: neither a running docker nor podman found; install one, or build the images elsewhere"; \
		echo "  (docs/deploy.md, 'Building the images'); the binaries alone: make build function"; exit 1; fi
	$(CONTAINER) build -f infra/Dockerfile.coordinator -t $(IMAGE_REPO)/sluice-coordinator:$(IMAGE_TAG) .
	$(CONTAINER) build -f infra/Dockerfile -t $(IMAGE_REPO)/sluice-function:$(IMAGE_TAG) .

# Offline checkers of the deployment files: kubeconform (Kubernetes
# manifests; needs JSON schemas, see docs/deploy.md) into ./bin.
KUBECONFORM_VERSION := v0.8.0
$(BIN)/kubeconform:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

# The deployment tests: templates parsed and checked against the code,
# rendered files against sluice deploy --dry-run, terraform fmt and
# kustomize build where installed, kubeconform where it has schemas, and
# the coordinator image's entrypoint run as a plain process.
test-deploy: $(BIN)/minio $(BIN)/kubeconform
	$(GO) test -count=1 ./infra/ ./cmd/sluice/ -run 'Deploy|Template|Terraform|Kube|Knative|OpenFaaS|SAM|Dockerfile|Render'
	SLUICE_IMAGE_BUILD=1 $(GO) test -count=1 -timeout 30m ./tests/ -run 'TestCoordinatorImageEntrypoint'
