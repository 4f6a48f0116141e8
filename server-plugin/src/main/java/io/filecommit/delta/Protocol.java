package io.filecommit.delta;

/**
 * Delta {@code protocol} action (protocol section "Protocol Evolution").
 *
 * @param minReaderVersion minimum reader version (1 for every table this project writes)
 * @param minWriterVersion minimum writer version: 2 for plain tables, 4 with change data feed
 */
public record Protocol(int minReaderVersion, int minWriterVersion) {
  /** The protocol of a new plain table: reader 1, writer 2. */
  public static final Protocol DEFAULT = new Protocol(1, 2);

  /** Highest writer version this writer implements (appendOnly, invariants, CDF). */
  public static final int MAX_SUPPORTED_WRITER = 4;

  /** Highest reader version this writer can read. */
  public static final int MAX_SUPPORTED_READER = 1;

  /**
   * Fails if this writer cannot safely write a table with this protocol.
   *
   * @param tablePath for the message
   * @throws UnsupportedOperationException naming the versions when they are too new
   */
  public void checkSupported(String tablePath) {
    if (minReaderVersion > MAX_SUPPORTED_READER || minWriterVersion > MAX_SUPPORTED_WRITER) {
      throw new UnsupportedOperationException(
          "Delta table at " + tablePath + " requires protocol (reader " + minReaderVersion + ", writer "
              + minWriterVersion + "); filecommit supports up to (reader " + MAX_SUPPORTED_READER
              + ", writer " + MAX_SUPPORTED_WRITER + ")");
    }
  }
}
