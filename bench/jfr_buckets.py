"""Where the CPU of a bulk write goes: aggregates a JDK Flight Recording into buckets.

Reads the ``jdk.ExecutionSample`` events of a ``.jfr`` file (``jfr print --json``; the JDK's
``jfr`` tool must be on PATH), as written by ``bench_bulk_write.py --jfr DIR``, and prints:

* the share of CPU samples (percent of all Java execution samples of the recording) per bucket:
  Parquet scan/decoding, row conversion (columnar to UnsafeRow, generated projections), sort
  (UnsafeExternalSorter and friends), shuffle/hash partitioning, Parquet encoding, compression (per
  codec: snappy, zstd, lz4, gzip), statistics (filecommit's ``ParquetStats`` footer reads),
  file system (Hadoop FileSystem, checksums, java.io/nio), commit/log (other filecommit and Delta
  Kernel code), other. Each sample goes to the bucket of the first frame, from the leaf down, that
  a rule below claims; JDK and Scala library frames are passed over unless a rule claims them;
* inclusive shares: samples whose stack holds a frame of the given class anywhere (a sample can
  count in several);
* samples of the executor task threads and of all other (driver, RPC) threads, with the seconds
  between the first and last sample of each (Spark names its idle pool threads "Executor task
  idle worker", and JFR keeps the first name it saw, so stages cannot be told apart by name);
* the top ``--top`` leaf methods and the GC pauses (``jdk.GarbageCollection``: count, sum of
  pauses in ms) and the mean JVM CPU load (``jdk.CPULoad``, user + system, of all cores).

JFR samples Java threads only (every 10 ms each with ``settings=profile``); GC threads' CPU is not
among them, hence the pause sums. Usage: ``python bench/jfr_buckets.py FILE.jfr [FILE.jfr ...]
[--top 25] [--json OUT]``; a ``FILE.jfr.window`` file (begin and end, ISO-8601) beside a recording
limits it to that window (``bench_bulk_write.py --jfr`` writes one). Units: percent of samples, seconds, milliseconds.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys

# (bucket, regex on "package.Class.method"), tried in order on each frame from the leaf down.
RULES = [
    ("compression: snappy", r"snappy|Snappy"),
    ("compression: zstd", r"zstd|Zstd"),
    ("compression: lz4", r"lz4|Lz4|LZ4"),
    ("compression: gzip/deflate", r"java\.util\.zip\.(Deflater|Inflater|GZIP)|Gzip|Deflate"),
    ("statistics (ParquetStats footer reads)", r"^io\.filecommit\.\S*ParquetStats"),
    ("sort", r"UnsafeExternalSorter|UnsafeInMemorySorter|RadixSort|UnsafeSorterSpill|UnsafeExternalRowSorter"
             r"|\.SortExec|PrefixComparator|TimSort|UnsafeSortDataFormat|RecordComparator|\.sort\."),
    ("shuffle / hash partitioning", r"org\.apache\.spark\.shuffle\.|ShuffleExternalSorter|ShuffleWriter"
                                    r"|HashPartitioning|Murmur3|ShuffleExchange"),
    ("parquet: scan/decoding", r"datasources\.parquet\.(Vectorized|ParquetColumnVector|ParquetReadSupport"
                               r"|ParquetRowConverter|SpecificParquetRecordReader|ParquetFooterReader)"
                               r"|vectorized\.(OnHeap|OffHeap|Writable)ColumnVector|parquet\.hadoop\.ParquetFileReader"
                               r"|parquet\.column\.values\.\S*(Reader|Decoder)|parquet\.column\.impl\.ColumnReader"
                               r"|parquet\.bytes\.BytesInput\$?.*Decompress|ParquetDecodingException"
                               r"|parquet\.format\.Util\.read|parquet\.format\.\S*\.read"),
    ("parquet: encoding", r"^org\.apache\.parquet\.|datasources\.parquet\.(ParquetWriteSupport|ParquetOutputWriter)"),
    ("row conversion (UnsafeRow / codegen)", r"UnsafeRow|UnsafeProjection|GeneratedClass|InternalRow"
                                             r"|ColumnarToRow|ColumnarBatch|unsafe\.types\.UTF8String|UnsafeWriter"
                                             r"|catalyst\.expressions\.|WholeStageCodegen|BufferedRowIterator"),
    ("spark write task (FileFormatWriter, data writers)", r"datasources\.(FileFormatWriter|FileFormatDataWriter"
                                                          r"|SingleDirectoryDataWriter|DynamicPartition|BaseDynamicPartition)"),
    ("file system / IO", r"^org\.apache\.hadoop\.fs\.|^java\.io\.(File|RandomAccessFile)|^sun\.nio\.|^java\.nio\."
                         r"|^org\.apache\.hadoop\.util\.(DataChecksum|NativeCrc)|java\.util\.zip\.CRC"),
    ("commit / log (filecommit, Delta Kernel)", r"^io\.filecommit\.|^io\.delta\."),
    ("spark scheduler / rpc / connect", r"^org\.apache\.spark\.(scheduler|rpc|network|sql\.connect|executor|storage"
                                        r"|util|memory)\.|^io\.grpc\.|^io\.netty\."),
]
SKIP = re.compile(r"^(java\.|javax\.|jdk\.|sun\.|scala\.|com\.google\.|org\.slf4j|kotlin\.)")
INCLUSIVE = {
    "FileFormatWriter (the write job's tasks)": r"datasources\.FileFormatWriter",
    "SortExec / UnsafeExternalSorter": r"\.SortExec|UnsafeExternalSorter|UnsafeExternalRowSorter",
    "parquet writer (ParquetOutputWriter)": r"ParquetOutputWriter|InternalParquetRecordWriter",
    "parquet reader (Vectorized*)": r"VectorizedParquetRecordReader",
    "page compression (CodecFactory / compressors)": r"CodecFactory|Compressor|snappy|zstd",
    "filecommit code": r"^io\.filecommit\.",
    "ParquetStats": r"ParquetStats",
}


def frame_name(frame):
    """``package.Class.method`` of one JSON stack frame."""
    m = frame["method"]
    return f"{m['type']['name'].replace('/', '.')}.{m['name']}"


def events(path, types):
    """The events of the given types in a recording (``jfr print --json``), only those that start
    inside the window of ``path + ".window"`` when that file exists."""
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "512", "--events", ",".join(types), path],
                         check=True, capture_output=True, text=True).stdout
    evs = json.loads(out)["recording"]["events"]
    if os.path.exists(path + ".window"):
        with open(path + ".window") as f:
            begin, end = (parse_time(t) for t in f.read().split())
        evs = [e for e in evs if begin <= parse_time(e["values"]["startTime"]) <= end]
    return evs


def parse_time(text):
    """A UTC datetime of an ISO-8601 timestamp (nanosecond digits beyond microseconds dropped)."""
    from datetime import datetime

    m = re.fullmatch(r"(.*?T[\d:]+)(?:\.(\d+))?(Z|[+-][\d:]+)?", text)
    frac = (m.group(2) or "0")[:6].ljust(6, "0")
    zone = m.group(3) or "Z"
    return datetime.fromisoformat(f"{m.group(1)}.{frac}{'+00:00' if zone == 'Z' else zone}")


def classify(frames):
    """The bucket of one sample's stack (frames leaf first)."""
    if any(STATS.search(f) for f in frames):
        return "statistics (ParquetStats footer reads)"
    reading = any(READ_PATH.search(f) for f in frames)
    for name in frames:
        for bucket, rx in COMPILED:
            if rx.search(name):
                if bucket.startswith("compression") and (reading or any(DECOMPRESS.search(f) for f in frames)):
                    return "parquet: scan/decoding (decompression, " + bucket.split(": ")[1] + ")"
                if bucket == "parquet: encoding" and reading:
                    return "parquet: scan/decoding"
                return bucket
    return "other: " + next((n.rsplit(".", 2)[0] for n in frames if not SKIP.search(n)), frames[0] if frames else "?")


COMPILED = [(b, re.compile(r)) for b, r in RULES]
READ_PATH = re.compile(r"VectorizedParquetRecordReader|parquet\.hadoop\.ParquetFileReader|ParquetFooterReader")
STATS = re.compile(r"^io\.filecommit\.\S*ParquetStats")
DECOMPRESS = re.compile(r"(?i)decompress|uncompress")


def analyse(path, top, cores):
    """Bucket shares, inclusive shares, samples per thread kind and GC of one recording, as a dict."""
    samples = events(path, ["jdk.ExecutionSample"])
    n = len(samples)
    buckets = collections.Counter()
    inclusive = collections.Counter()
    leaves = collections.Counter()
    threads: dict[str, list] = {}
    for ev in samples:
        v = ev["values"]
        frames = [frame_name(f) for f in (v.get("stackTrace") or {}).get("frames", [])]
        buckets[classify(frames)] += 1
        for label, rx in INCLUSIVE.items():
            if any(re.search(rx, f) for f in frames):
                inclusive[label] += 1
        if frames:
            leaves[frames[0]] += 1
        thread = (v.get("sampledThread") or {}).get("javaName") or "?"
        key = "executor task threads" if thread.startswith("Executor task") else "driver / other threads"
        threads.setdefault(key, []).append(v["startTime"])
    gcs = events(path, ["jdk.GarbageCollection"])
    pauses = [duration_ms(g["values"]["sumOfPauses"]) for g in gcs]
    gc_cpu = sum(duration_ms(g["values"]["userTime"]) + duration_ms(g["values"]["systemTime"])
                 for g in events(path, ["jdk.GCCPUTime"])) / 1000
    cpu = events(path, ["jdk.CPULoad"])
    load = [g["values"]["jvmUser"] + g["values"]["jvmSystem"] for g in cpu]
    seconds = span([c["values"]["startTime"] for c in cpu]) if len(cpu) > 1 else 0.0
    jvm_cpu = (sum(load) / len(load)) * cores * seconds if load else 0.0
    return {
        "file": path,
        "samples": n,
        "buckets": {b: round(100 * c / n, 1) for b, c in buckets.most_common()},
        "inclusive": {b: round(100 * inclusive[b] / n, 1) for b in INCLUSIVE},
        "threads": {k: {"samples": len(t), "span_s": round(span(t), 2)} for k, t in sorted(threads.items())},
        "top_leaves": [(f, round(100 * c / n, 1)) for f, c in leaves.most_common(top)],
        "gc": {"count": len(gcs), "pause_ms_sum": round(sum(pauses), 1), "cpu_s": round(gc_cpu, 2)},
        "jvm_cpu_s": round(jvm_cpu, 2),
    }


def duration_ms(value):
    """Milliseconds of an ISO-8601 duration as ``jfr print --json`` writes it (``PT0.026157023S``)."""
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", str(value))
    if not m:
        return 0.0
    h, mi, sec = (float(x) if x else 0.0 for x in m.groups())
    return 1000 * (3600 * h + 60 * mi + sec)


def span(times):
    """Seconds between the first and last of ISO-8601 timestamps."""
    ts = sorted(parse_time(t) for t in times)
    return (ts[-1] - ts[0]).total_seconds() if ts else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="cores behind jdk.CPULoad's fraction")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    results = []
    for path in args.files:
        r = analyse(path, args.top, args.cores)
        results.append(r)
        gc = r["gc"]
        share = f"{100 * gc['cpu_s'] / r['jvm_cpu_s']:.1f}% of" if r["jvm_cpu_s"] else "of"
        print(f"\n{path}: {r['samples']:,} Java execution samples; JVM CPU {r['jvm_cpu_s']} s; GC "
              f"{gc['count']} collections, {gc['pause_ms_sum']} ms paused, {gc['cpu_s']} s CPU in pauses "
              f"({share} the JVM's CPU, not among the samples)")
        print("  buckets (percent of samples; leaf-first first match):")
        for b, pct in r["buckets"].items():
            print(f"    {pct:5.1f}  {b}")
        print("  inclusive (percent of samples with such a frame anywhere on the stack):")
        for b, pct in r["inclusive"].items():
            print(f"    {pct:5.1f}  {b}")
        print("  threads (samples, seconds first to last sample):")
        for k, s in r["threads"].items():
            print(f"    {k:<24} {s['samples']:6d} {s['span_s']:7.2f} s")
        print(f"  top {args.top} leaf methods:")
        for f, pct in r["top_leaves"]:
            print(f"    {pct:5.1f}  {f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
