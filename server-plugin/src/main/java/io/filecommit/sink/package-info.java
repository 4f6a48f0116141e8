/**
 * Exactly-once batch writes into a streaming file sink directory, driven by an explicit batch id:
 * {@link BatchSinkWriter} does what Spark's {@code FileStreamSink.addBatch} does for one
 * micro-batch (the {@code _spark_metadata} log of Spark's {@code FileStreamSinkLog}), and {@link
 * ManifestFileCommitProtocol} (Spark's {@code ManifestFileCommitProtocol}) makes one write job one
 * batch of that log. Not a Delta table: the layout is Spark's file sink.
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code files} and every package below it, and {@code
 * commands} on its own layer; never {@code connect}.
 */
package io.filecommit.sink;
