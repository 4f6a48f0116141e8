#!/usr/bin/env bash
# Static check of docker/ (no Docker engine needed): exits non-zero on any problem.
#
# Usage: bash docker/check.sh        (from anywhere; about 1 s once PyYAML is available)
#
# Checks:
#   - shell syntax of docker/*.sh (bash -n); shellcheck too when it is installed (optional)
#   - docker/Dockerfile: instructions and their continuation lines, FROM/stage names, COPY --from
#     and FROM stage references (every JAR_SOURCE value), exec-form CMD/ENTRYPOINT/HEALTHCHECK are
#     JSON arrays, COPY sources exist in the repository and are not excluded by
#     docker/Dockerfile.dockerignore (the jar from `make build` only warns when not built yet)
#   - docker/compose.yaml parses (PyYAML); build contexts, dockerfiles, targets and args exist;
#     depends_on, named volumes, ports; tests reach the server service on the server's port; the
#     server and the tests mount the same volume at the same path and the table dirs lie on it
#   - constants agree: plugin classes (client/filecommit/session.py PLUGIN_CLASS and the Delta Connect
#     DELTA_CONNECT_*_CLASS, the Java sources, run-standalone.sh), jar name (Makefile JAR, pom.xml
#     artifactId/version, Dockerfile,
#     run-standalone.sh), pyspark version (Makefile PYSPARK_VERSION, inside pyproject.toml's client
#     range, and the Dockerfile), Python 3.11
#     (base image, SPARK_HOME), port 15002, and the env vars tests/conftest.py honours
#   - `docker compose config -q` or `docker-compose config -q` when one of them is installed (optional)
#
# PyYAML: taken from $PYTHON, the repository's .venv or python3 if one of them has it; otherwise
# installed once into ${FILECOMMIT_CHECK_VENV:-~/.cache/filecommit/docker-check-venv} from PyPI.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
status=0

for script in "$HERE"/*.sh; do
  if ! bash -n "$script"; then
    echo "FAIL: bash syntax error in ${script#"$REPO"/}"
    status=1
  fi
done
if command -v shellcheck >/dev/null 2>&1; then
  if ! shellcheck -S warning "$HERE"/*.sh; then
    echo "FAIL: shellcheck found problems"
    status=1
  fi
else
  echo "note: shellcheck not installed, skipped (apt-get install shellcheck)"
fi

py=""
for candidate in "${PYTHON:-}" "$REPO/.venv/bin/python" python3; do
  if [[ -n "$candidate" ]] && "$candidate" -c 'import yaml' >/dev/null 2>&1; then
    py="$candidate"
    break
  fi
done
if [[ -z "$py" ]]; then
  venv="${FILECOMMIT_CHECK_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/filecommit/docker-check-venv}"
  if ! "$venv/bin/python" -c 'import yaml' >/dev/null 2>&1; then
    echo "note: installing PyYAML into $venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "pyyaml>=6,<7"
  fi
  py="$venv/bin/python"
fi

if ! "$py" - "$REPO" <<'PYEOF'
import json, os, re, shlex, sys

import yaml

REPO = sys.argv[1]
errors, warnings = [], []


def err(msg):
    errors.append(msg)


def read(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return f.read()


def one(pattern, text, where, flags=0):
    m = re.search(pattern, text, flags)
    if not m:
        err(f"{where}: pattern {pattern!r} not found")
        return None
    return m.group(1)


# ---------------------------------------------------------------- constants of the project
makefile = read("Makefile")
jar_rel = one(r"^JAR\s*:=\s*(\S+)", makefile, "Makefile", re.M)
jar_name = os.path.basename(jar_rel) if jar_rel else None
pom = read("server-plugin/pom.xml")
pom_head = pom.split("<dependencies>")[0]
artifact = one(r"<artifactId>([^<]+)</artifactId>", pom_head, "pom.xml")
version = one(r"<version>([^<]+)</version>", pom_head, "pom.xml")
if jar_name and artifact and version and jar_name != f"{artifact}-{version}.jar":
    err(f"Makefile JAR {jar_name} != pom.xml {artifact}-{version}.jar")
plugin_class = one(r'^PLUGIN_CLASS\s*=\s*"([^"]+)"', read("client/filecommit/session.py"), "session.py", re.M)
if plugin_class:
    java = os.path.join("server-plugin/src/main/java", *plugin_class.split(".")) + ".java"
    if not os.path.isfile(os.path.join(REPO, java)):
        err(f"PLUGIN_CLASS {plugin_class}: no Java source {java}")
# The Delta Connect plugins (delta-spark's DeltaTable API): the same names in session.py, Java and run-standalone.sh.
for const in ("DELTA_CONNECT_COMMAND_CLASS", "DELTA_CONNECT_RELATION_CLASS"):
    cls = one(rf'^{const}\s*=\s*"([^"]+)"', read("client/filecommit/session.py"), "session.py", re.M)
    if cls:
        if not os.path.isfile(os.path.join(REPO, "server-plugin/src/main/java", *cls.split(".")) + ".java"):
            err(f"{const} {cls}: no Java source")
        if one(rf'^{const}="([^"]+)"', read("docker/run-standalone.sh"), "run-standalone.sh", re.M) != cls:
            err(f"run-standalone.sh {const} differs from session.py ({cls})")
pyproject = read("pyproject.toml")
# The server's pyspark: the Makefile's test pin, a release of pyproject's client range (>=A.B,<C.D).
pyspark_pin = one(r"^PYSPARK_VERSION\s*:=\s*([0-9.]+)", makefile, "Makefile", re.M)
pyspark_range = re.search(r'"pyspark\[connect\]>=([0-9.]+),<([0-9.]+)"', pyproject)
if not pyspark_range:
    err("pyproject.toml: no pyspark[connect]>=A.B,<C.D range")
elif pyspark_pin:
    low, high = pyspark_range.groups()
    version = tuple(int(x) for x in pyspark_pin.split("."))
    if not tuple(int(x) for x in low.split(".")) <= version < tuple(int(x) for x in high.split(".")):
        err(f"Makefile PYSPARK_VERSION {pyspark_pin} is outside pyproject.toml's pyspark[connect]>={low},<{high}")
conftest = read("tests/conftest.py")
for var in ("FILECOMMIT_REMOTE", "FILECOMMIT_TEST_DIR"):
    if f'"{var}"' not in conftest:
        err(f"tests/conftest.py does not read ${var}; docker/compose.yaml relies on it")

# ---------------------------------------------------------------- run-standalone.sh
runner = read("docker/run-standalone.sh")
if plugin_class and one(r'^PLUGIN_CLASS="([^"]+)"', runner, "run-standalone.sh", re.M) != plugin_class:
    err(f"run-standalone.sh PLUGIN_CLASS differs from session.py ({plugin_class})")
if jar_name and one(r'^JAR_NAME="([^"]+)"', runner, "run-standalone.sh", re.M) != jar_name:
    err(f"run-standalone.sh JAR_NAME differs from the Makefile ({jar_name})")
for needle in ('--jars "$JAR"', '"spark.connect.extensions.command.classes=$PLUGIN_CLASS,$DELTA_CONNECT_COMMAND_CLASS"',
               '"spark.connect.extensions.relation.classes=$DELTA_CONNECT_RELATION_CLASS"',
               '"spark.connect.grpc.binding.address=$BIND"', '"spark.connect.grpc.binding.port=$PORT"',
               "org.apache.spark.sql.connect.service.SparkConnectServer", "start-connect-server.sh",
               "stop-connect-server.sh", '"spark.filecommit.allowedRoots=$FILECOMMIT_ALLOWED_ROOTS"',
               "SPARK_CONNECT_AUTHENTICATE_TOKEN"):
    if needle not in runner:
        err(f"run-standalone.sh: missing {needle}")

# ---------------------------------------------------------------- docs/operators.md (the guide docker/ follows)
guide = read("docs/operators.md")
for needle in (plugin_class, jar_name, "spark.connect.extensions.command.classes", "spark.filecommit.allowedRoots",
               "spark.connect.authenticate.token", "SPARK_CONNECT_AUTHENTICATE_TOKEN", "start-connect-server.sh",
               "docker/run-standalone.sh", "FILECOMMIT_ALLOWED_ROOTS"):
    if needle and needle not in guide:
        err(f"docs/operators.md: does not mention {needle}")
java_root = os.path.join(REPO, "server-plugin/src/main/java")
server_keys = set()
for d, _, files in os.walk(java_root):
    for f in files:
        if f.endswith(".java"):
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                server_keys |= set(re.findall(r'"(spark\.filecommit\.[A-Za-z0-9.]+[A-Za-z0-9])"', fh.read()))
# Every server setting is declared in conf/FileCommitConf.java, which docs/settings.md is generated from.
conf_src = read("server-plugin/src/main/java/io/filecommit/conf/FileCommitConf.java")
if "<!-- generated: settings -->" not in read("docs/settings.md"):
    err("docs/settings.md: the generated settings table (<!-- generated: settings -->) is missing")
for key in sorted(server_keys):
    if f'"{key}"' not in conf_src:
        err(f"server setting {key} (server-plugin/src/main) is not declared in conf/FileCommitConf.java, "
            "so docs/settings.md does not document it")
if not os.access(os.path.join(REPO, "docker/run-standalone.sh"), os.X_OK):
    err("docker/run-standalone.sh is not executable")
default_port = one(r'FILECOMMIT_PORT:-(\d+)', runner, "run-standalone.sh")

# ---------------------------------------------------------------- Dockerfile
INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
                "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
dockerfile_rel = "docker/Dockerfile"
lines = read(dockerfile_rel).split("\n")
if not lines[0].startswith("# syntax=docker/dockerfile:1"):
    err("Dockerfile: first line must be '# syntax=docker/dockerfile:1' (COPY --chmod, RUN --mount)")
instrs, buf, start = [], "", 0
for no, line in enumerate(lines, 1):
    stripped = line.strip()
    if not buf and (not stripped or stripped.startswith("#")):
        continue
    if buf and stripped.startswith("#"):
        continue  # comment lines inside a continued instruction are dropped by the parser
    if not buf:
        start = no
    elif stripped.split(" ", 1)[0] in INSTRUCTIONS - {"CMD"} and stripped.split(" ", 1)[0].isupper():
        err(f"Dockerfile:{no}: {stripped.split(' ', 1)[0]} inside the continued instruction of line {start} "
            "(a trailing backslash too many?)")
    if stripped.endswith("\\"):
        buf += stripped[:-1] + " "
        continue
    buf += stripped
    word, _, rest = buf.partition(" ")
    instrs.append((start, word.upper(), rest.strip()))
    if word.upper() not in INSTRUCTIONS:
        err(f"Dockerfile:{start}: unknown instruction {word!r}")
    if word != word.upper():
        err(f"Dockerfile:{start}: write instructions in upper case ({word})")
    buf = ""
if buf:
    err("Dockerfile: ends inside a continued line")

global_args, stages, stage_args = {}, [], {}
current = None
for no, ins, rest in instrs:
    if ins == "ARG" and current is None:
        name, _, default = rest.partition("=")
        global_args[name] = default
    elif current is None and ins != "FROM":
        err(f"Dockerfile:{no}: {ins} before the first FROM")
    if ins == "FROM":
        m = re.fullmatch(r"(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?", rest, re.I)
        if not m:
            err(f"Dockerfile:{no}: cannot parse FROM {rest!r}")
            continue
        image, name = m.group(1), m.group(2)
        if name and name in [s["name"] for s in stages]:
            err(f"Dockerfile:{no}: duplicate stage name {name}")
        current = {"name": name, "image": image, "line": no, "instrs": []}
        stages.append(current)
    elif current is not None:
        current["instrs"].append((no, ins, rest))

names = [s["name"] for s in stages]
jar_sources = {global_args.get("JAR_SOURCE", "")} | {"local", "maven"}
for i, s in enumerate(stages):
    image = s["image"]
    variants = [image]
    if "${JAR_SOURCE}" in image:
        variants = [image.replace("${JAR_SOURCE}", v) for v in sorted(jar_sources)]
    for v in variants:
        v = re.sub(r"\$\{(\w+)\}", lambda m: global_args.get(m.group(1), m.group(0)), v)
        if "$" in v:
            err(f"Dockerfile:{s['line']}: unresolved variable in FROM {image}")
        elif "/" not in v and ":" not in v and v != "scratch" and v not in names[:i]:
            err(f"Dockerfile:{s['line']}: FROM {v} is neither an earlier stage nor an image reference")
base = global_args.get("PYTHON_IMAGE", "")
if not re.fullmatch(r"python:3\.11-slim-bookworm", base):
    err(f"Dockerfile: base image {base!r} is not python:3.11-slim-bookworm (Java 17 comes from bookworm)")

# .dockerignore of this Dockerfile (BuildKit: <Dockerfile>.dockerignore next to it)
ignore_rel = "docker/Dockerfile.dockerignore"
patterns = []
for raw in read(ignore_rel).splitlines():
    raw = raw.strip()
    if not raw or raw.startswith("#"):
        continue
    neg = raw.startswith("!")
    pat = os.path.normpath(raw[1:] if neg else raw).lstrip("/")
    rx = ""
    i = 0
    while i < len(pat):
        if pat.startswith("**", i):
            rx += ".*"
            i += 2
            if pat.startswith("/", i):
                rx = rx[:-2] + "(?:.*/)?"
                i += 1
        elif pat[i] == "*":
            rx += "[^/]*"
            i += 1
        elif pat[i] == "?":
            rx += "[^/]"
            i += 1
        else:
            rx += re.escape(pat[i])
            i += 1
    patterns.append((neg, re.compile(rx + r"\Z")))


def ignored(rel):
    """Docker's rule: the last pattern matching the path or one of its parent dirs decides."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
    out = False
    for neg, rx in patterns:
        if any(rx.match(p) for p in prefixes):
            out = not neg
    return out


for must_skip in (".venv/bin/python", "out/x", "server-plugin/target/classes/x.class",
                  "client/filecommit/jars/" + (jar_name or "x.jar"), "client/filecommit/__pycache__/x.pyc"):
    if not ignored(must_skip):
        err(f"{ignore_rel}: {must_skip} would be sent in the build context")

server_stage = next((s for s in stages if s["name"] == "server"), None)
tests_stage = next((s for s in stages if s["name"] == "tests"), None)
if server_stage is None or tests_stage is None:
    err("Dockerfile: stages 'server' and 'tests' are required")
for s in stages:
    for no, ins, rest in s["instrs"]:
        if ins in ("CMD", "ENTRYPOINT") or (ins == "HEALTHCHECK" and " CMD [" in f" {rest}"):
            form = rest if ins != "HEALTHCHECK" else rest[rest.index("CMD") + 3:].strip()
            if form.startswith("["):
                try:
                    value = json.loads(form)
                    if not (isinstance(value, list) and value and all(isinstance(x, str) for x in value)):
                        raise ValueError
                except ValueError:
                    err(f"Dockerfile:{no}: {ins} exec form is not a JSON array of strings: {form}")
            else:
                warnings.append(f"Dockerfile:{no}: {ins} in shell form")
        if ins in ("COPY", "ADD"):
            tokens = shlex.split(rest)
            flags = [t for t in tokens if t.startswith("--")]
            paths = [t for t in tokens if not t.startswith("--")]
            if len(paths) < 2:
                err(f"Dockerfile:{no}: {ins} needs a source and a destination")
                continue
            src_stage = next((f.split("=", 1)[1] for f in flags if f.startswith("--from=")), None)
            if src_stage is not None:
                if src_stage not in names[: stages.index(s)]:
                    err(f"Dockerfile:{no}: COPY --from={src_stage} is not an earlier stage")
                continue
            for src in paths[:-1]:
                full = os.path.join(REPO, src)
                if jar_rel and src == jar_rel:
                    if not os.path.isfile(full):
                        warnings.append(f"Dockerfile:{no}: {src} not built yet (make build); needed for JAR_SOURCE=local")
                elif not os.path.exists(full):
                    err(f"Dockerfile:{no}: COPY source {src} does not exist in the repository")
                    continue
                rel = os.path.normpath(src)
                if ignored(rel):
                    err(f"Dockerfile:{no}: COPY source {src} is excluded by {ignore_rel}")
                elif os.path.isdir(full):
                    kept = [os.path.join(r, f) for r, _, fs in os.walk(full) for f in fs
                            if not ignored(os.path.relpath(os.path.join(r, f), REPO))]
                    if not kept:
                        err(f"Dockerfile:{no}: every file under {src} is excluded by {ignore_rel}")

text = read(dockerfile_rel)
if pyspark_pin and f"ARG PYSPARK_VERSION={pyspark_pin}" not in text:
    err(f"Dockerfile: PYSPARK_VERSION is not the Makefile's PYSPARK_VERSION {pyspark_pin}")
if '"pyspark[connect]==${PYSPARK_VERSION}"' not in text:
    err("Dockerfile: pyspark[connect]==${PYSPARK_VERSION} is not installed")
if "SPARK_HOME=/usr/local/lib/python3.11/site-packages/pyspark" not in text:
    err("Dockerfile: SPARK_HOME is not the python3.11 pyspark folder")
if "openjdk-17-jre-headless" not in text:
    err("Dockerfile: Java 17 (openjdk-17-jre-headless) is not installed")
if jar_name:
    if f"FILECOMMIT_JAR=/opt/filecommit/jars/{jar_name}" not in text:
        err(f"Dockerfile: FILECOMMIT_JAR does not point at /opt/filecommit/jars/{jar_name}")
    if f"COPY server-plugin/target/{jar_name}" not in text or f"cp target/{jar_name}" not in text:
        err(f"Dockerfile: jar stages do not produce {jar_name}")
if '-Dspark.jars.dir="$SPARK_HOME/jars"' not in text:
    err("Dockerfile: the Maven build does not pass -Dspark.jars.dir (see Makefile)")
if server_stage:
    sins = server_stage["instrs"]
    exposed = [r for _, i, r in sins if i == "EXPOSE"]
    env = " ".join(r for _, i, r in sins if i == "ENV")
    cmd = [r for _, i, r in sins if i == "CMD"]
    if exposed != [default_port]:
        err(f"Dockerfile server: EXPOSE {exposed} != run-standalone.sh port {default_port}")
    if f"FILECOMMIT_PORT={default_port}" not in env or "FILECOMMIT_BIND=0.0.0.0" not in env:
        err("Dockerfile server: FILECOMMIT_BIND=0.0.0.0 / FILECOMMIT_PORT not set")
    try:
        cmd_ok = bool(cmd) and json.loads(cmd[-1]) == ["/opt/filecommit/run-standalone.sh", "foreground"]
    except ValueError:
        cmd_ok = False
    if not cmd_ok:
        err("Dockerfile server: CMD is not run-standalone.sh foreground")
    if not any(i == "USER" and r != "root" for _, i, r in sins):
        err("Dockerfile server: runs as root")
    if not any(i == "ENTRYPOINT" and "tini" in r for _, i, r in sins):
        err("Dockerfile server: no init (tini) as ENTRYPOINT")

# ---------------------------------------------------------------- compose.yaml
compose_rel = "docker/compose.yaml"
try:
    compose = yaml.safe_load(read(compose_rel))
except yaml.YAMLError as e:
    err(f"{compose_rel}: YAML error: {e}")
    compose = None
if isinstance(compose, dict):
    services = compose.get("services") or {}
    declared_volumes = set((compose.get("volumes") or {}).keys())
    for required in ("server", "tests"):
        if required not in services:
            err(f"{compose_rel}: no service {required!r}")
    mounts = {}
    for name, svc in services.items():
        build = svc.get("build")
        if isinstance(build, dict):
            ctx = os.path.normpath(os.path.join(REPO, "docker", build.get("context", ".")))
            if ctx != REPO:
                err(f"{compose_rel}: {name}.build.context is {ctx}, expected the repository root")
            dfile = os.path.join(ctx, build.get("dockerfile", "Dockerfile"))
            if os.path.normpath(dfile) != os.path.join(REPO, dockerfile_rel):
                err(f"{compose_rel}: {name}.build.dockerfile is not {dockerfile_rel}")
            if build.get("target") not in names:
                err(f"{compose_rel}: {name}.build.target {build.get('target')!r} is not a Dockerfile stage")
            for arg in (build.get("args") or {}):
                if arg not in global_args and f"ARG {arg}" not in text:
                    err(f"{compose_rel}: {name}.build.args.{arg} is not an ARG of the Dockerfile")
            m = re.fullmatch(r"\$\{\w+:-(\w+)\}", str((build.get("args") or {}).get("JAR_SOURCE", "${X:-local}")))
            if not m or f"jar-{m.group(1)}" not in names:
                err(f"{compose_rel}: {name}.build.args.JAR_SOURCE default has no jar-* stage")
        for dep in (svc.get("depends_on") or {}):
            if dep not in services:
                err(f"{compose_rel}: {name}.depends_on {dep} is not a service")
        for vol in svc.get("volumes") or []:
            source, _, target = str(vol).partition(":")
            target = target.split(":")[0]
            if not source.startswith((".", "/")) and source not in declared_volumes:
                err(f"{compose_rel}: {name} mounts undeclared volume {source}")
            mounts.setdefault(name, {})[source] = target
        for port in svc.get("ports") or []:
            if not re.fullmatch(r"(?:127\.0\.0\.1:)?\d+:\d+", str(port)):
                err(f"{compose_rel}: {name}.ports {port!r} not HOST:CONTAINER (bind 127.0.0.1 for safety)")
        hc = svc.get("healthcheck")
        if hc and not (isinstance(hc.get("test"), list) and hc["test"][0] in ("CMD", "CMD-SHELL", "NONE")):
            err(f"{compose_rel}: {name}.healthcheck.test must be a list starting with CMD")
    server, tests = services.get("server", {}), services.get("tests", {})
    ports = [str(p).rsplit(":", 1)[-1] for p in server.get("ports") or []]
    if default_port not in ports:
        err(f"{compose_rel}: server does not publish port {default_port}")
    env = tests.get("environment") or {}
    remote = str(env.get("FILECOMMIT_REMOTE", ""))
    if remote != f"sc://server:{default_port}":
        err(f"{compose_rel}: tests FILECOMMIT_REMOTE {remote!r} != sc://server:{default_port}")
    if (tests.get("depends_on") or {}).get("server", {}).get("condition") != "service_healthy":
        err(f"{compose_rel}: tests must wait for server to be healthy")
    shared = [(s, t) for s, t in (mounts.get("server") or {}).items() if (mounts.get("tests") or {}).get(s) == t]
    if not shared:
        err(f"{compose_rel}: server and tests share no volume at the same path")
    else:
        root = shared[0][1].rstrip("/") + "/"
        test_dir = str(env.get("FILECOMMIT_TEST_DIR", ""))
        if not test_dir.startswith(root):
            err(f"{compose_rel}: FILECOMMIT_TEST_DIR {test_dir!r} is not on the shared volume {root}")
        roots = str((server.get("environment") or {}).get("FILECOMMIT_ALLOWED_ROOTS", ""))
        if not roots:
            err(f"{compose_rel}: server sets no FILECOMMIT_ALLOWED_ROOTS (docs/operators.md: a shared server does)")
        elif not any(root.startswith(r.removeprefix("file:").rstrip("/") + "/") for r in roots.split(",")):
            err(f"{compose_rel}: FILECOMMIT_ALLOWED_ROOTS {roots!r} does not cover the shared volume {root}")
        basetemp = [a for a in tests.get("command") or [] if a.startswith("--basetemp=")]
        if not basetemp or not basetemp[0].split("=", 1)[1].startswith(root):
            err(f"{compose_rel}: tests need --basetemp on the shared volume (tmp_path tables)")
elif compose is not None:
    err(f"{compose_rel}: not a mapping")

for w in warnings:
    print(f"warning: {w}")
for e in errors:
    print(f"FAIL: {e}")
print(f"docker/ static check: {len(errors)} problem(s), {len(warnings)} warning(s); "
      f"{len(stages)} Dockerfile stages, {len(instrs)} instructions")
sys.exit(1 if errors else 0)
PYEOF
then
  status=1
fi

compose_cmd=()
if docker compose version >/dev/null 2>&1; then
  compose_cmd=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
  compose_cmd=(docker-compose)
fi
if (( ${#compose_cmd[@]} )); then
  if ! "${compose_cmd[@]}" -f "$HERE/compose.yaml" config -q; then
    echo "FAIL: ${compose_cmd[*]} config rejected docker/compose.yaml"
    status=1
  fi
else
  echo "note: no docker compose / docker-compose, compose schema validation skipped"
fi

exit "$status"
