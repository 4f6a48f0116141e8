"""The embedded server's logs: quiet by default, Spark's defaults with the documented switch.

Each case starts its own embedded server in a subprocess (``local_session()`` reuses one server
per process), writes a new table twice and checks what the server printed on stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from filecommit import session

pytestmark = pytest.mark.slow

SCRIPT = """
import sys, filecommit
spark = filecommit.local_session(conf={"spark.filecommit.allowedRoots": sys.argv[1]})
filecommit.write(spark.range(5), sys.argv[1] + "/t")
filecommit.write(spark.range(5), sys.argv[1] + "/t")
print("rows", spark.range(3).count())
"""

KERNEL_WARNING = "Cannot find a complete checkpoint"


def _start(tmp_path, verbose: bool) -> subprocess.Popen:
    # A fresh process: not marked as a Connect client (the suite's session sets that), no token or
    # remote of the suite's server.
    drop = {session.VERBOSE_LOGS_ENV, "SPARK_CONNECT_MODE_ENABLED", "SPARK_CONNECT_AUTHENTICATE_TOKEN", "SPARK_REMOTE",
            "SPARK_LOCAL_REMOTE"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    if verbose:
        env[session.VERBOSE_LOGS_ENV] = "1"
    root = os.path.realpath(str(tmp_path))
    return subprocess.Popen([sys.executable, "-c", SCRIPT, root], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _stderr(proc: subprocess.Popen) -> str:
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "rows 3" in out
    return err


def test_quiet_by_default_and_verbose_on_request(tmp_path):
    # Both embedded servers start at once: each start is mostly waiting on one JVM thread.
    quiet_proc, verbose_proc = _start(tmp_path / "quiet", verbose=False), _start(tmp_path / "verbose", verbose=True)
    quiet, verbose = _stderr(quiet_proc), _stderr(verbose_proc)
    assert KERNEL_WARNING not in quiet, quiet
    assert "NativeCodeLoader" not in quiet and "resolves to a loopback address" not in quiet, quiet
    assert "Using Spark's default log4j profile" not in quiet, quiet  # our configuration was loaded

    assert KERNEL_WARNING in verbose, verbose
    assert "Using Spark's default log4j profile" in verbose, verbose


def test_log_config_leaves_a_configuration_of_your_own():
    own = {"spark.driver.extraJavaOptions": "-Xss4m -Dlog4j2.configurationFile=file:/etc/mine.properties"}
    assert session._with_log_config(own, verbose_logs=False) == own
    assert session._with_log_config({}, verbose_logs=True) == {}
    quiet = session._with_log_config({"spark.driver.extraJavaOptions": "-Xss4m"}, verbose_logs=False)
    assert quiet["spark.driver.extraJavaOptions"] == f"-Xss4m -Dlog4j2.configurationFile=file:{session.QUIET_LOG_CONFIG}"
    assert os.path.isfile(session.QUIET_LOG_CONFIG)
