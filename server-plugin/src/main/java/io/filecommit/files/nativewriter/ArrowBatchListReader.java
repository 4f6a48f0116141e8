package io.filecommit.files.nativewriter;

import java.io.IOException;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/** An {@link ArrowReader} over batches already made; each is released once loaded. */
final class ArrowBatchListReader extends ArrowReader {
  private final Schema schema;
  private final List<ArrowRecordBatch> batches;
  private int next;

  ArrowBatchListReader(BufferAllocator allocator, Schema schema, List<ArrowRecordBatch> batches) {
    super(allocator);
    this.schema = schema;
    this.batches = batches;
  }

  @Override
  public synchronized boolean loadNextBatch() throws IOException {
    if (next >= batches.size()) {
      return false;
    }
    ArrowRecordBatch batch = batches.set(next++, null);
    try (batch) {
      new VectorLoader(getVectorSchemaRoot()).load(batch);
    }
    return true;
  }

  @Override
  public long bytesRead() {
    return 0;
  }

  @Override
  protected void closeReadSource() {}

  @Override
  protected Schema readSchema() {
    return schema;
  }
}
