#!/usr/bin/env bash
# Start, stop or smoke-test a standalone Spark Connect server with the filecommit plugin.
#
# This is the one place that knows how the server is launched: docker/Dockerfile runs
# `run-standalone.sh foreground` as the container's command, and on a machine without Docker the
# same script starts the same server from the virtualenv's pyspark (make build first).
#
# Usage: docker/run-standalone.sh COMMAND
#   foreground  run the server in the foreground (the container's command); Ctrl-C / SIGTERM stops it
#   start       start the server as a daemon (pyspark's sbin/start-connect-server.sh), wait until its
#               port accepts connections (at most FILECOMMIT_START_TIMEOUT seconds, default 120)
#   stop        stop the daemon started by `start` (sbin/stop-connect-server.sh) and wait for it to exit
#   status      exit 0 if the daemon is running, 1 if not
#   smoke       start, write a small DataFrame with filecommit.write to a /tmp table from a remote
#               client (sc://HOST:PORT), read it back with deltalake.DeltaTable, stop; exit 1 on a mismatch
#
# Environment (all optional):
#   PYTHON                   Python with pyspark installed (default: the repository's .venv/bin/python,
#                            else python3); used to find SPARK_HOME and to run the smoke client
#   SPARK_HOME               Spark installation (default: the installed pyspark package folder)
#   FILECOMMIT_JAR           plugin jar (default: server-plugin/target/filecommit-server-plugin-0.1.0.jar)
#   FILECOMMIT_BIND          gRPC binding address (default 127.0.0.1; the container sets 0.0.0.0)
#   FILECOMMIT_PORT          gRPC port (default 15002)
#   FILECOMMIT_MASTER        Spark master of the server (default local[*])
#   FILECOMMIT_SERVER_DIR    pid and log files of `start`/`stop` (default out/standalone in the repository)
#   FILECOMMIT_SERVER_OPTS   extra spark-submit arguments, split on spaces (e.g. "--driver-memory 4g")
#   FILECOMMIT_ALLOWED_ROOTS spark.filecommit.allowedRoots: comma-separated URIs the server may write
#                            under (default: unset, any absolute path; set it on a shared server)
#   SPARK_CONNECT_AUTHENTICATE_TOKEN
#                            when set, the server requires this bearer token from every client
#                            (Spark Connect's spark.connect.authenticate.token, read from the
#                            environment so the secret is not on the command line); docs/sharing.md
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"

# Keep these in step with client/filecommit/session.py (PLUGIN_CLASS, DELTA_CONNECT_COMMAND_CLASS,
# DELTA_CONNECT_RELATION_CLASS) and the Makefile (JAR); docker/check.sh verifies that they are.
PLUGIN_CLASS="io.filecommit.connect.FileCommitPlugin"
DELTA_CONNECT_COMMAND_CLASS="io.filecommit.connect.DeltaConnectCommands"
DELTA_CONNECT_RELATION_CLASS="io.filecommit.connect.DeltaConnectRelations"
JAR_NAME="filecommit-server-plugin-0.1.0.jar"
SERVER_CLASS="org.apache.spark.sql.connect.service.SparkConnectServer"

if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$REPO/.venv/bin/python" ]]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi
if [[ -z "${SPARK_HOME:-}" ]]; then
  SPARK_HOME="$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
fi
export SPARK_HOME
JAR="${FILECOMMIT_JAR:-$REPO/server-plugin/target/$JAR_NAME}"
BIND="${FILECOMMIT_BIND:-127.0.0.1}"
PORT="${FILECOMMIT_PORT:-15002}"
MASTER="${FILECOMMIT_MASTER:-local[*]}"
SERVER_DIR="${FILECOMMIT_SERVER_DIR:-$REPO/out/standalone}"
START_TIMEOUT="${FILECOMMIT_START_TIMEOUT:-120}"

# Daemon bookkeeping of sbin/spark-daemon.sh: its own pid/log dir and ident, so that neither
# /tmp's pid files of other Spark daemons nor $SPARK_HOME/logs are touched.
export SPARK_PID_DIR="$SERVER_DIR"
export SPARK_LOG_DIR="$SERVER_DIR"
export SPARK_IDENT_STRING="filecommit-$PORT"
PID_FILE="$SPARK_PID_DIR/spark-$SPARK_IDENT_STRING-$SERVER_CLASS-1.pid"

server_args() {
  # One array for both modes: the container and the local daemon run exactly this.
  ARGS=(
    --master "$MASTER"
    --jars "$JAR"
    --conf "spark.connect.extensions.command.classes=$PLUGIN_CLASS,$DELTA_CONNECT_COMMAND_CLASS"
    # delta-spark's DeltaTable API over Spark Connect (Delta Connect's messages; docs/deltatable-api.md)
    --conf "spark.connect.extensions.relation.classes=$DELTA_CONNECT_RELATION_CLASS"
    --conf "spark.plugins=io.filecommit.connect.ServerStartCheck"
    # df.write.format("delta").save(path) as directly as filecommit.write (docs/operators.md)
    --conf "spark.connect.grpc.interceptor.classes=io.filecommit.connect.StandardWriteInterceptor"
    # SQL on Delta tables (DELETE / UPDATE / MERGE / OPTIMIZE ... on delta.`/path` and by name), as
    # filecommit.local_session sets them: the session extension and the spark_catalog plugin.
    --conf "spark.sql.extensions=io.filecommit.catalog.FileCommitExtensions"
    --conf "spark.sql.catalog.spark_catalog=io.filecommit.catalog.FileCommitCatalog"
    --conf "spark.connect.grpc.binding.address=$BIND"
    --conf "spark.connect.grpc.binding.port=$PORT"
    --conf spark.ui.enabled=false
    --conf spark.ui.showConsoleProgress=false
    --conf spark.sql.shuffle.partitions=4
  )
  if [[ -n "${FILECOMMIT_ALLOWED_ROOTS:-}" ]]; then
    ARGS+=(--conf "spark.filecommit.allowedRoots=$FILECOMMIT_ALLOWED_ROOTS")
  fi
  if [[ -n "${FILECOMMIT_SERVER_OPTS:-}" ]]; then
    # shellcheck disable=SC2206  # word splitting is the documented behaviour
    ARGS+=(${FILECOMMIT_SERVER_OPTS})
  fi
}

check_inputs() {
  if [[ ! -f "$JAR" ]]; then
    echo "plugin jar not found: $JAR (run \`make build\` or set FILECOMMIT_JAR)" >&2
    exit 2
  fi
  if [[ ! -x "$SPARK_HOME/sbin/start-connect-server.sh" ]]; then
    echo "no sbin/start-connect-server.sh under SPARK_HOME=$SPARK_HOME (pip install 'pyspark[connect]==4.3.0')" >&2
    exit 2
  fi
}

port_open() {  # 0 when something accepts TCP connections on $1:$2
  "$PYTHON" - "$1" "$2" <<'EOF'
import socket, sys
s = socket.socket()
s.settimeout(1.0)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
except OSError:
    sys.exit(1)
finally:
    s.close()
EOF
}

client_host() {  # where a client on this machine connects to
  if [[ "$BIND" == "0.0.0.0" ]]; then echo 127.0.0.1; else echo "$BIND"; fi
}

daemon_pid() {  # prints the daemon's pid if it is alive
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

cmd_foreground() {
  check_inputs
  server_args
  # start-connect-server.sh with SPARK_NO_DAEMONIZE runs spark-submit as a child of a bash
  # (spark-daemon.sh), which dies on SIGTERM before the JVM has shut down. Exec'ing spark-submit
  # with the same class and name instead makes the JVM this process (spark-submit and spark-class
  # both exec), so `docker stop` reaches it directly and Spark's shutdown hooks run.
  export SPARK_CONNECT_MODE=0
  echo "filecommit: Spark Connect server on $BIND:$PORT, plugin $PLUGIN_CLASS from $JAR"
  exec "$SPARK_HOME/bin/spark-submit" --class "$SERVER_CLASS" --name "Spark Connect server" "${ARGS[@]}"
}

cmd_start() {
  check_inputs
  server_args
  if pid="$(daemon_pid)"; then
    echo "already running as pid $pid (docker/run-standalone.sh stop)" >&2
    exit 1
  fi
  local host
  host="$(client_host)"
  if port_open "$host" "$PORT"; then
    echo "port $host:$PORT is already in use (another Connect server? set FILECOMMIT_PORT)" >&2
    exit 1
  fi
  mkdir -p "$SERVER_DIR"
  "$SPARK_HOME/sbin/start-connect-server.sh" "${ARGS[@]}"
  local waited=0
  until port_open "$host" "$PORT"; do
    if ! daemon_pid >/dev/null; then
      echo "server exited during start-up; log:" >&2
      tail -n 40 "$SERVER_DIR"/*.out >&2 || true
      exit 1
    fi
    if (( waited >= START_TIMEOUT )); then
      echo "server did not open $host:$PORT within ${START_TIMEOUT}s; stopping it" >&2
      cmd_stop >&2 || true
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  echo "filecommit: Spark Connect server pid $(daemon_pid) listening on sc://$host:$PORT (log in $SERVER_DIR)"
}

cmd_stop() {
  local pid
  if ! pid="$(daemon_pid)"; then
    echo "no filecommit Spark Connect server running (pid file $PID_FILE)"
    return 0
  fi
  "$SPARK_HOME/sbin/stop-connect-server.sh"
  local waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if (( waited >= 60 )); then
      echo "pid $pid still alive after SIGTERM and 30 s; sending SIGKILL" >&2
      kill -9 "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  echo "filecommit: server pid $pid stopped"
}

cmd_status() {
  local pid
  if pid="$(daemon_pid)"; then
    echo "running: pid $pid, sc://$(client_host):$PORT"
  else
    echo "not running"
    return 1
  fi
}

cmd_smoke() {
  cmd_start
  trap 'cmd_stop' EXIT
  local table
  table="/tmp/filecommit-standalone-smoke/t_$(date +%s)_$$"
  PYTHONPATH="$REPO/client${PYTHONPATH:+:$PYTHONPATH}" \
    "$PYTHON" - "sc://$(client_host):$PORT" "$table" <<'EOF'
import sys, time
import filecommit
from deltalake import DeltaTable
from pyspark.sql import SparkSession, functions as F

url, table = sys.argv[1], sys.argv[2]
t0 = time.time()
spark = SparkSession.builder.remote(url).getOrCreate()
print(f"connected to {url} (Spark {spark.version}) in {time.time() - t0:.1f} s")
df = spark.range(1000).select(F.col("id"), (F.col("id") % 4).cast("string").alias("part"),
                              (F.col("id") * 1.5).alias("x"))
t1 = time.time()
r = filecommit.write(df, table, mode="append", partition_by=["part"])
print(f"filecommit.write: version {r.version}, {r.metrics.files} files, {r.metrics.rows} rows, "
      f"{r.metrics.bytes} bytes, server {r.metrics.duration_ms} ms, client {1000 * (time.time() - t1):.0f} ms")
dt = DeltaTable(table)
pdf = dt.to_pandas()
print(f"delta-rs: version {dt.version()}, {len(pdf)} rows, partitions {sorted(pdf['part'].unique())}, "
      f"sum(id) {int(pdf['id'].sum())}")
spark.stop()
ok = dt.version() == r.version == 0 and len(pdf) == 1000 and int(pdf["id"].sum()) == 999 * 1000 // 2
print("SMOKE OK" if ok else "SMOKE FAILED")
sys.exit(0 if ok else 1)
EOF
}

case "${1:-}" in
  foreground) cmd_foreground ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  smoke) cmd_smoke ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
