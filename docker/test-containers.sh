#!/usr/bin/env bash
# Containerized integration tests with podman, every image built here from Debian's packages and
# PyPI (no image registry): `make test-containers` runs this script.
#
# Usage: docker/test-containers.sh [STEP...]   (default: images suite crash)
#   images  the runtime base (docker/base.sh, mmdebstrap), the server image (docker/Dockerfile,
#           target server, PYTHON_IMAGE = that base), a MinIO image (docker/minio.Containerfile, the
#           binary of `make minio`) and the Go contract test image (docker/go-contract.Containerfile,
#           the test binary of `go test -c`); each skipped when its inputs did not change
#   suite   starts MinIO and the server (1 GiB heap, 2 GiB container limit, S3A pointed at MinIO),
#           checks that the server container reaches MinIO, then runs the end-to-end tests marked
#           `container` from the host against the containerized server (FILECOMMIT_REMOTE; those
#           parametrized over local/s3 also on s3a:// tables in the MinIO container), the Go
#           contract test from its own container; local tables on a volume shared at the same path
#           by host and containers
#   crash   tests/test_container_crash.py: 2 `podman kill`s of the server container during commits
#           from 3 clients, restarted each time; both readers check every acknowledged row
#   memory  tests/test_container_memory.py: DELETE with deletion vectors of half of TPC-H SF1
#           lineitem in a server with 1 GiB heap and a 2 GiB container limit (slow, not in CI)
#
# Flags of every podman call (measured on Debian 12 as root, cgroups v1/v2 hybrid; docker/README.md):
#   --runtime=runc --cgroup-manager=cgroupfs   crun and the systemd cgroup manager are not usable there
#   --ulimit nofile=N:N --ulimit nproc=N:N     podman's defaults (nofile 1048576, nproc 32768 for builds)
#                                              exceed what the container may set: setrlimit fails; N=16384
#   --network=host                             no CNI/netavark networks needed; ports bound to 127.0.0.1
#   build --format=docker                      keeps the HEALTHCHECK (OCI images have none)
#   build --build-arg JAR_SOURCE=local         podman 4.3 resolves `FROM jar-${JAR_SOURCE}` only for
#                                              build arguments given on the command line
#
# Environment: PODMAN (default podman), PYTHON (default .venv/bin/python), MINIO_BINARY (default
# .tools/bin/minio), FILECOMMIT_CONTAINER_WORK (scratch directory; default a fresh mktemp dir),
# FILECOMMIT_PIP_CERT (CA bundle for pip behind a TLS-intercepting proxy; default $PIP_CERT when set),
# FILECOMMIT_REBUILD=1 (build every image even when its inputs did not change).
# Needs root (the server runs as uid 185 and writes the shared directory the tests read).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
cd "$REPO"
PYTHON="${PYTHON:-$REPO/.venv/bin/python}"
MINIO_BINARY="${MINIO_BINARY:-$REPO/.tools/bin/minio}"
CERT="${FILECOMMIT_PIP_CERT:-${PIP_CERT:-}}"

# 16384: below the hard limits of the machines measured (nofile 20000; nproc 65536 already fails
# there although `ulimit -Hu` says 96365); FILECOMMIT_ULIMIT overrides both.
NOFILE="${FILECOMMIT_ULIMIT:-16384}"
NPROC="${FILECOMMIT_ULIMIT:-16384}"
PODMAN=("${PODMAN:-podman}" --runtime=runc --cgroup-manager=cgroupfs)
ULIMITS=(--ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC")
export FILECOMMIT_PODMAN="${PODMAN[*]}"
RUN_ID="$$"
# Every container of this run carries this label: the exit trap removes them all (also the crash
# test's, should pytest be killed). --health-interval=disable: no systemd timer runs health checks
# here; `podman healthcheck run` runs the image's check on demand. (podman 4.3 still logs that it
# cannot reach systemd to add the timer: `podman run`'s stderr goes to a file, shown on failure.)
LABEL="filecommit-test=$RUN_ID"
RUN_OPTS=(--network=host "${ULIMITS[@]}" --label "$LABEL" --health-interval=disable)
export FILECOMMIT_PODMAN_RUN_OPTS="${RUN_OPTS[*]}"

SERVER_IMAGE=localhost/filecommit-server:0.1.0
MINIO_IMAGE=localhost/filecommit-minio:test
GO_IMAGE=localhost/filecommit-go-contract:test
SERVER="filecommit-test-server-$RUN_ID"
MINIO="filecommit-test-minio-$RUN_ID"
BUILD_DIR="$REPO/.build/containers"

log() { printf '[test-containers %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

if [[ "$(id -u)" != 0 ]]; then
  echo "docker/test-containers.sh: needs root (rootful podman; see docker/README.md)" >&2
  exit 2
fi
for tool in "${PODMAN[0]}" runc mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "docker/test-containers.sh: $tool not found (apt-get install podman runc mmdebstrap)" >&2; exit 2; }
done

free_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- images -----------------------------------------------------------------------------------

inputs_hash() {  # sha256 of the named files' contents and the given strings (an image's inputs)
  { for x in "$@"; do if [[ -f "$x" ]]; then sha256sum < "$x"; else printf '%s\n' "$x"; fi; done; } \
    | sha256sum | cut -c1-16
}

# build TAG INPUTS_HASH ARGS...: podman build with the flags above, labelled io.filecommit.inputs=
# INPUTS_HASH; skipped when TAG exists with that label (its inputs did not change: a warm run
# starts no build at all). The build log goes to $BUILD_DIR/build-<tag>.log.
build() {
  local tag="$1" hash="$2"; shift 2
  local name="${tag##*/}"
  if [[ -z "${FILECOMMIT_REBUILD:-}" ]] \
      && [[ "$("${PODMAN[@]}" image inspect -f '{{index .Labels "io.filecommit.inputs"}}' "$tag" 2>/dev/null)" == "$hash" ]]; then
    log "$tag is up to date (inputs $hash)"
    return 0
  fi
  local certopts=()
  if [[ -n "$CERT" && -f "$CERT" ]]; then
    certopts=(-v "$CERT:/run/filecommit-build-ca.crt:ro" --build-arg PIP_CERT=/run/filecommit-build-ca.crt)
  fi
  if ! "${PODMAN[@]}" build --format=docker --network=host "${ULIMITS[@]}" "${certopts[@]}" \
      --label "io.filecommit.inputs=$hash" -t "$tag" "$@" > "$BUILD_DIR/build-${name%%:*}.log" 2>&1; then
    tail -n 40 "$BUILD_DIR/build-${name%%:*}.log" >&2
    echo "docker/test-containers.sh: building $tag failed (log: $BUILD_DIR/build-${name%%:*}.log)" >&2
    exit 1
  fi
}

# The server image's Python packages as wheels on the host, mounted into its build (PIP_WHEELS):
# pyspark is an sdist of ~450 MB that pip would download and build into a wheel inside the build;
# the host's pip has that wheel (and the binary wheels) in its cache since `make setup` installed
# the same pyspark, so this costs a copy. The container's pip falls back to PyPI for anything the
# directory lacks. Reused while the requirements are the same.
WHEELS=""
server_wheels() {
  local version reqs key
  version="$(sed -n 's/^ARG PYSPARK_VERSION=//p' docker/Dockerfile)"
  reqs=("pyspark[connect]==$version" "pandas<3")
  key="$(inputs_hash "${reqs[@]}" "$("$PYTHON" -c 'import sys; print(sys.version_info[:2])')")"
  WHEELS="$BUILD_DIR/wheels-$key"
  if [[ ! -f "$WHEELS/.complete" ]]; then
    rm -rf "$BUILD_DIR"/wheels-*
    mkdir -p "$WHEELS"
    if "$PYTHON" -m pip wheel -q --disable-pip-version-check -w "$WHEELS" "${reqs[@]}" > "$BUILD_DIR/wheels.log" 2>&1; then
      touch "$WHEELS/.complete"
    else
      log "pip wheel on the host failed (the build installs from PyPI; $BUILD_DIR/wheels.log)"
    fi
  fi
}

step_images() {
  local t0=$SECONDS t
  mkdir -p "$BUILD_DIR/minio" "$BUILD_DIR/go"
  BASE="$(PODMAN="${PODMAN[0]}" "$HERE/base.sh")"
  log "base $BASE ($((SECONDS - t0)) s)"
  local jar=server-plugin/target/filecommit-server-plugin-0.1.0.jar
  [[ -f "$jar" ]] || { echo "no plugin jar: make build" >&2; exit 2; }
  t=$SECONDS
  local hash
  hash="$(inputs_hash "$BASE" docker/Dockerfile docker/run-standalone.sh "$jar")"
  if [[ "$("${PODMAN[@]}" image inspect -f '{{index .Labels "io.filecommit.inputs"}}' "$SERVER_IMAGE" 2>/dev/null)" != "$hash" ]]; then
    server_wheels
  fi
  local wheelopts=()
  if [[ -n "$WHEELS" && -f "$WHEELS/.complete" ]]; then
    wheelopts=(-v "$WHEELS:/run/filecommit-wheels:ro" --build-arg PIP_WHEELS=/run/filecommit-wheels)
  fi
  build "$SERVER_IMAGE" "$hash" -f docker/Dockerfile --ignorefile docker/Dockerfile.dockerignore "${wheelopts[@]}" \
    --build-arg PYTHON_IMAGE="$BASE" --build-arg JAR_SOURCE=local --target server .
  log "server image $SERVER_IMAGE ($((SECONDS - t)) s)"
  t=$SECONDS
  if [[ ! -x "$MINIO_BINARY" ]] && make -n minio >/dev/null 2>&1; then make minio; fi
  [[ -x "$MINIO_BINARY" ]] || { echo "no MinIO binary at $MINIO_BINARY (make minio, or set MINIO_BINARY)" >&2; exit 2; }
  cmp -s "$MINIO_BINARY" "$BUILD_DIR/minio/minio" || cp "$MINIO_BINARY" "$BUILD_DIR/minio/minio"
  build "$MINIO_IMAGE" "$(inputs_hash "$BASE" docker/minio.Containerfile "$BUILD_DIR/minio/minio")" \
    -f docker/minio.Containerfile --build-arg BASE="$BASE" "$BUILD_DIR/minio"
  log "MinIO image $MINIO_IMAGE ($((SECONDS - t)) s)"
  t=$SECONDS
  [[ -d client/go/gen/filecommit/v1 ]] || { echo "client/go/gen is missing: make go-gen" >&2; exit 2; }
  (cd client/go && CGO_ENABLED=0 "${GO:-go}" test -c -o "$BUILD_DIR/go/contract.test" ./filecommit)
  build "$GO_IMAGE" "$(inputs_hash "$BASE" docker/go-contract.Containerfile "$BUILD_DIR/go/contract.test")" \
    -f docker/go-contract.Containerfile --build-arg BASE="$BASE" "$BUILD_DIR/go"
  log "Go contract image $GO_IMAGE ($((SECONDS - t)) s)"
  log "images ready in $((SECONDS - t0)) s"
}

# --- containers -------------------------------------------------------------------------------

WORK=""
cleanup() {
  local ids
  ids="$("${PODMAN[@]}" ps -a -q --filter "label=$LABEL" 2>/dev/null || true)"
  if [[ -n "$ids" ]]; then
    # shellcheck disable=SC2086  # one id per word
    "${PODMAN[@]}" rm -f -v $ids >/dev/null 2>&1 || true
  fi
  if [[ -n "$WORK" && -z "${FILECOMMIT_CONTAINER_KEEP:-}" ]]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

make_work() {
  WORK="${FILECOMMIT_CONTAINER_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/filecommit-containers.XXXXXX")}"
  mkdir -p "$WORK/data"
  chmod 0755 "$WORK"
  # The shared directory: the server (uid 185) writes tables here, the tests (root) make
  # directories for the server with umask 000 (see run_pytest).
  chown 185:185 "$WORK/data"
  chmod 0777 "$WORK/data"
}

# wait_healthy NAME PORT TIMEOUT: until the container's port accepts connections (probed from the
# host, every 0.5 s; its state checked every 5 s), then the image's own HEALTHCHECK must pass
# (`podman healthcheck run`: no systemd timer runs it here). Probing with `podman healthcheck run`
# alone, an exec of Python in the container every second, takes CPU from the JVM starting next to it.
wait_healthy() {
  local name="$1" port="$2" timeout="$3" t0=$SECONDS n=0
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if (( n++ % 10 == 9 )) && [[ "$("${PODMAN[@]}" inspect -f '{{.State.Running}}' "$name")" != true ]]; then
      "${PODMAN[@]}" logs --tail 60 "$name" >&2 || true
      echo "container $name exited during start-up" >&2
      return 1
    fi
    if (( SECONDS - t0 > timeout )); then
      "${PODMAN[@]}" logs --tail 60 "$name" >&2 || true
      echo "container $name not listening on $port within $timeout s" >&2
      return 1
    fi
    sleep 0.5
  done
  until "${PODMAN[@]}" healthcheck run "$name" >/dev/null 2>&1; do
    if (( SECONDS - t0 > timeout )); then
      "${PODMAN[@]}" logs --tail 60 "$name" >&2 || true
      echo "container $name not healthy within $timeout s" >&2
      return 1
    fi
    sleep 1
  done
  log "$name healthy after $((SECONDS - t0)) s"
}

start_minio() {  # the MinIO container (not waited for: wait_healthy "$MINIO" "$MINIO_PORT" ...)
  MINIO_PORT="$(free_port)"
  MINIO_USER="filecommit-$RUN_ID"
  MINIO_PASSWORD="$("$PYTHON" -c 'import secrets; print(secrets.token_hex(16))')"
  MINIO_BUCKET="filecommit-$RUN_ID"
  "${PODMAN[@]}" run -d --name "$MINIO" "${RUN_OPTS[@]}" --memory=1g \
    -e MINIO_PORT="$MINIO_PORT" -e MINIO_ROOT_USER="$MINIO_USER" -e MINIO_ROOT_PASSWORD="$MINIO_PASSWORD" \
    -e MINIO_BROWSER=off -e MINIO_UPDATE=off \
    "$MINIO_IMAGE" server /data --address "127.0.0.1:$MINIO_PORT" --console-address "127.0.0.1:$(free_port)" \
    >/dev/null 2>"$WORK/podman-run-minio.log" || { cat "$WORK/podman-run-minio.log" >&2; exit 1; }
}

# The server container (not waited for: wait_healthy "$SERVER" "$SERVER_PORT" ...), with Hadoop S3A
# pointed at the MinIO container: the S3A connector's jars of `make s3a-jars` mounted read-only and
# put on the driver's class path (local master: the driver is the only JVM), the endpoint and the
# credentials as server-owned spark.hadoop.* settings, the run's bucket among the allowed roots.
start_server() {
  SERVER_PORT="$(free_port)"
  local jars cp="" j s3a
  jars=("$REPO"/.build/s3a-jars/*.jar)
  [[ -f "${jars[0]}" ]] || { echo "no S3A jars in $REPO/.build/s3a-jars: make s3a-jars" >&2; exit 2; }
  for j in "${jars[@]}"; do cp+="${cp:+:}/opt/filecommit/s3a-jars/${j##*/}"; done
  s3a="--conf spark.driver.extraClassPath=$cp"
  s3a+=" --conf spark.hadoop.fs.s3a.endpoint=http://127.0.0.1:$MINIO_PORT --conf spark.hadoop.fs.s3a.endpoint.region=us-east-1"
  s3a+=" --conf spark.hadoop.fs.s3a.path.style.access=true --conf spark.hadoop.fs.s3a.connection.ssl.enabled=false"
  s3a+=" --conf spark.hadoop.fs.s3a.aws.credentials.provider=org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
  s3a+=" --conf spark.hadoop.fs.s3a.access.key=$MINIO_USER --conf spark.hadoop.fs.s3a.secret.key=$MINIO_PASSWORD"
  "${PODMAN[@]}" run -d --name "$SERVER" "${RUN_OPTS[@]}" --memory=2g --memory-swap=2g \
    -v "$WORK/data:$WORK/data" -v "$REPO/.build/s3a-jars:/opt/filecommit/s3a-jars:ro" \
    -e FILECOMMIT_BIND=127.0.0.1 -e FILECOMMIT_PORT="$SERVER_PORT" \
    -e FILECOMMIT_ALLOWED_ROOTS="file:$WORK/data,s3a://$MINIO_BUCKET/" \
    -e FILECOMMIT_SERVER_OPTS="--driver-memory 1g $s3a" \
    "$SERVER_IMAGE" >/dev/null 2>"$WORK/podman-run-server.log" || { cat "$WORK/podman-run-server.log" >&2; exit 1; }
}

run_pytest() {  # umask 000: directories the tests make on the shared volume are the server's too
  (umask 000; FILECOMMIT_TEST_UMASK=000 FILECOMMIT_TEST_DIR="$WORK/data/tests" \
    "$PYTHON" -m pytest -q -rs -p no:cacheprovider --durations=5 "$@")
}

step_suite() {
  local t0=$SECONDS
  make_work
  start_minio
  start_server   # both start at once; MinIO is up long before the JVM
  wait_healthy "$MINIO" "$MINIO_PORT" 60
  wait_healthy "$SERVER" "$SERVER_PORT" 180
  # The server container reaches MinIO (host network): its cluster health endpoint answers 200.
  "${PODMAN[@]}" exec "$SERVER" python -c "import sys, urllib.request; r = urllib.request.urlopen(sys.argv[1], timeout=5); print('server container -> MinIO', sys.argv[1], r.status); sys.exit(r.status != 200)" \
    "http://127.0.0.1:$MINIO_PORT/minio/health/cluster"
  local user
  user="$("${PODMAN[@]}" exec "$SERVER" id -un)"
  [[ "$user" == spark ]] || { echo "server runs as $user, not spark" >&2; exit 1; }
  FILECOMMIT_REMOTE="sc://127.0.0.1:$SERVER_PORT" \
  FILECOMMIT_MINIO_ENDPOINT="http://127.0.0.1:$MINIO_PORT" FILECOMMIT_MINIO_ACCESS_KEY="$MINIO_USER" \
  FILECOMMIT_MINIO_SECRET_KEY="$MINIO_PASSWORD" FILECOMMIT_MINIO_BUCKET="$MINIO_BUCKET" \
  FILECOMMIT_GO_COMMAND="${PODMAN[*]} run --rm ${RUN_OPTS[*]} -v $WORK/data:$WORK/data -e FILECOMMIT_GO_REMOTE -e FILECOMMIT_GO_TOKEN -e FILECOMMIT_GO_TABLE_DIR -e FILECOMMIT_GO_REPORT $GO_IMAGE" \
    run_pytest -m container tests
  "${PODMAN[@]}" rm -f -v "$SERVER" "$MINIO" >/dev/null 2>&1
  log "suite passed in $((SECONDS - t0)) s"
}

step_crash() {
  local t0=$SECONDS
  [[ -n "$WORK" ]] || make_work
  FILECOMMIT_CONTAINER_IMAGE="$SERVER_IMAGE" run_pytest -s tests/test_container_crash.py
  log "crash test passed in $((SECONDS - t0)) s"
}

step_memory() {
  local t0=$SECONDS
  [[ -n "$WORK" ]] || make_work
  FILECOMMIT_CONTAINER_IMAGE="$SERVER_IMAGE" run_pytest -s tests/test_container_memory.py
  log "memory test passed in $((SECONDS - t0)) s"
}

main() {
  local steps=("$@") s t0=$SECONDS
  (( ${#steps[@]} )) || steps=(images suite crash)
  for s in "${steps[@]}"; do
    case "$s" in
      images) step_images ;;
      suite) step_suite ;;
      crash) step_crash ;;
      memory) step_memory ;;
      *) echo "unknown step $s (images, suite, crash, memory)" >&2; exit 2 ;;
    esac
  done
  log "done (${steps[*]}) in $((SECONDS - t0)) s"
}

# One line: bash has read the whole script before it runs (an edit during a run changes nothing).
main "$@"; exit $?
