# sluice: build, demo, test and benchmark. Everything it needs is built into ./bin.
GO      ?= go
BIN     := $(CURDIR)/bin
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
SF      ?= 0.01
DATA    ?= $(CURDIR)/.tmp/tpch-sf$(SF)

export SLUICE_MINIO_BIN := $(BIN)/minio

.PHONY: all build demo test test-tpch bench bench-aqe vet clean

all: build

# A pinned MinIO server, built once from the Go module proxy and reused.
$(BIN)/minio:
	@mkdir -p $(BIN)
	@echo "building MinIO $(MINIO_VERSION) into ./bin (first time only, a few minutes)"
	GOBIN=$(BIN) $(GO) install github.com/minio/minio@$(MINIO_VERSION)

build: $(BIN)/sluice

$(BIN)/sluice: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/sluice ./cmd/sluice

FORCE:

$(DATA)/lineitem:
	$(BIN)/sluice tpch gen --sf $(SF) --out $(DATA)

# The main job on the embedded stack: MinIO + miniredis + in-process functions.
demo: build $(BIN)/minio
	@$(MAKE) --no-print-directory $(DATA)/lineitem
	$(BIN)/sluice local demo --data $(DATA)

# All tests: unit, end-to-end against a real MinIO, miniredis and (when
# redis-server is installed) a real Redis, checked against DuckDB.
test: $(BIN)/minio
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) test -count=1 -race -timeout 20m ./planner/... ./coordinator/... ./shuffle/... ./function/...

# The TPC-H queries at SF 1 (BENCH_SF) on the embedded stack, against DuckDB
# on the same files in the same run.
BENCH_SF ?= 1
bench: $(BIN)/minio
	$(GO) test -run '^$$' -bench BenchmarkTPCH -benchtime 1x -timeout 60m ./tests/ -args -sf $(BENCH_SF)

# Adaptive on vs off: the TPC-H queries, a skewed join and a LIMIT, at BENCH_SF.
bench-aqe: $(BIN)/minio
	$(GO) test -run '^$$' -bench BenchmarkAQE -benchtime 1x -timeout 60m ./tests/ -args -sf $(BENCH_SF)

# All 22 TPC-H queries against DuckDB at a larger scale factor (SF=0.1).
test-tpch: $(BIN)/minio
	$(GO) test -count=1 -run 'TestTPCH' -timeout 30m ./tests/ -args -sf $(SF)

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || (gofmt -l .; exit 1)

clean:
	rm -rf $(BIN)/sluice .tmp
