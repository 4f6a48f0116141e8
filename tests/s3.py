"""A MinIO S3 server for the suite (``make minio`` builds it into ``.tools/bin/minio``), on 127.0.0.1.

:class:`MinioServer` starts one server with its own data directory and free ports, waits until it
answers, creates buckets, and stops it (``stop`` / ``kill`` / ``start`` again on the same data, for
the fault tests). :func:`server_conf` is the static Connect-server conf that points Hadoop S3A at it
(endpoint, static credentials, path-style access: the settings an operator gives, docs/storage.md,
"Object storage (S3)").
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import time
import urllib.request

from cluster import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINIO = os.path.join(ROOT, ".tools", "bin", "minio")
S3A_JARS = os.path.join(ROOT, ".build", "s3a-jars")
# The credentials of the suite's MinIO; a MinIO started elsewhere (the MinIO container of
# docker/test-containers.sh) passes its own in FILECOMMIT_MINIO_ACCESS_KEY / _SECRET_KEY.
ACCESS_KEY = os.environ.get("FILECOMMIT_MINIO_ACCESS_KEY") or "filecommit"
SECRET_KEY = os.environ.get("FILECOMMIT_MINIO_SECRET_KEY") or "filecommit-secret"
REGION = "us-east-1"
# The session's server (the conftest ``minio`` fixture sets it), for the helpers that read s3a:// tables.
ACTIVE: MinioServer | None = None


def s3a_jars() -> list[str]:
    """The S3A connector's jars (``make s3a-jars``); raises FileNotFoundError when missing."""
    jars = sorted(glob.glob(os.path.join(S3A_JARS, "*.jar")))
    if not jars:
        raise FileNotFoundError(f"no S3A jars in {S3A_JARS}: run `make s3a-jars`")
    return jars


class _Client:
    """Clients of a MinIO at ``self.endpoint`` with the suite's credentials."""

    endpoint: str

    def filesystem(self):
        """A ``pyarrow.fs.S3FileSystem`` on this server (listing, reading, bucket creation)."""
        from pyarrow import fs

        return fs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=self.endpoint,
                               scheme="http", region=REGION, allow_bucket_creation=True,
                               allow_bucket_deletion=True)

    def create_bucket(self, name: str) -> None:
        self.filesystem().create_dir(name)

    def pending_uploads(self, bucket: str, key: str) -> list[str]:
        """The ids of the multipart uploads to ``bucket/key`` that were started and neither completed
        nor aborted (S3's ListMultipartUploads with the key as prefix, signed with AWS Signature
        Version 4; MinIO lists the uploads of one exact key)."""
        import datetime
        import hashlib
        import hmac
        import re
        from urllib.parse import quote, urlparse

        host = urlparse(self.endpoint).netloc
        now = datetime.datetime.now(datetime.timezone.utc)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        query = f"prefix={quote(key, safe='-_.~')}&uploads="
        payload = hashlib.sha256(b"").hexdigest()
        canonical = "\n".join(["GET", f"/{bucket}", query, f"host:{host}", f"x-amz-content-sha256:{payload}",
                               f"x-amz-date:{stamp}", "", "host;x-amz-content-sha256;x-amz-date", payload])
        scope = f"{day}/{REGION}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        k = ("AWS4" + SECRET_KEY).encode()
        for part in (day, REGION, "s3", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        request = urllib.request.Request(f"{self.endpoint}/{bucket}?{query}", headers={
            "x-amz-date": stamp, "x-amz-content-sha256": payload,
            "Authorization": f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{scope}, "
                             f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={signature}"})
        with urllib.request.urlopen(request, timeout=10) as r:
            body = r.read().decode()
        return re.findall(r"<UploadId>([^<]+)</UploadId>", body)

    def storage_options(self) -> dict:
        """delta-rs (``deltalake``) storage options for this server."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": REGION,
                "AWS_ENDPOINT_URL": self.endpoint, "AWS_ALLOW_HTTP": "true",
                "AWS_S3_ALLOW_UNSAFE_RENAME": "true"}


class ExternalMinio(_Client):
    """A MinIO this suite did not start (``FILECOMMIT_MINIO_ENDPOINT``, e.g. ``http://127.0.0.1:9000``:
    the MinIO container next to the server container), with the bucket ``bucket`` among the remote
    server's allowed roots; no ``roots_bucket`` (None)."""

    def __init__(self, endpoint: str, bucket: str):
        self.endpoint = endpoint
        self.bucket = bucket
        self.roots_bucket = None


class MinioServer(_Client):
    """One MinIO process: ``endpoint`` is ``http://127.0.0.1:<port>``; data under ``data_dir``."""

    def __init__(self, data_dir: str, log_path: str | None = None):
        if not os.path.exists(MINIO):
            raise FileNotFoundError(f"MinIO missing at {MINIO}: run `make minio`")
        self.data_dir = data_dir
        self.log_path = log_path or os.path.join(os.path.dirname(data_dir.rstrip("/")), "minio.log")
        self.port = free_port()
        self.console_port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 30.0) -> None:
        """Start (or restart, on the same data and port) and wait until it serves requests.

        MinIO's ``/minio/health/live`` answers 200 before the object layer is initialized (S3 calls
        then get 503 ``XMinioServerNotInitialized``); ``/minio/health/cluster`` answers 200 only once
        the object layer is up and has write quorum, so that is the check waited on.
        """
        os.makedirs(self.data_dir, exist_ok=True)
        env = dict(os.environ, MINIO_ROOT_USER=ACCESS_KEY, MINIO_ROOT_PASSWORD=SECRET_KEY,
                   MINIO_BROWSER="off", MINIO_UPDATE="off", MINIO_REGION=REGION)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [MINIO, "server", "--quiet", "--address", f"127.0.0.1:{self.port}",
             "--console-address", f"127.0.0.1:{self.console_port}", self.data_dir],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"MinIO exited with {self.proc.returncode}; see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.endpoint}/minio/health/cluster", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise TimeoutError(f"MinIO did not answer on {self.endpoint} within {timeout_s} s")

    def stop(self) -> None:
        """Stop gracefully (SIGTERM, then SIGKILL after 10 s)."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        """Kill at once (SIGKILL): a crash of the object store."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None



def server_conf(endpoint: str) -> dict:
    """Static Connect-server conf for S3A on ``endpoint`` (``spark.hadoop.*``: the server's own
    Hadoop settings, which clients may not change)."""
    return {
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.endpoint.region": REGION,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.aws.credentials.provider":
            "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "spark.hadoop.fs.s3a.access.key": ACCESS_KEY,
        "spark.hadoop.fs.s3a.secret.key": SECRET_KEY,
        "spark.hadoop.fs.s3a.attempts.maximum": "3",
        "spark.hadoop.fs.s3a.retry.limit": "3",
    }
