package io.filecommit.txn;

/**
 * An idempotent write's application transaction (protocol "Transaction Identifiers"; Delta's
 * writer options {@code txnAppId} / {@code txnVersion}).
 *
 * @param appId application id, non-empty
 * @param version the application's version, >= 0
 */
public record TransactionId(String appId, long version) {
  /**
   * Checks the id before anything is written.
   *
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_ILLEGAL_OPTION} for an empty app
   *     id or a negative version (parameters {@code name}: {@code txnAppId} / {@code txnVersion},
   *     {@code input})
   */
  void check() {
    if (appId == null || appId.isEmpty()) {
      throw io.filecommit.errors.ErrorClass.DELTA_ILLEGAL_OPTION.error(
          "txn app id must be a non-empty string, got '" + appId + "'",
          java.util.Map.of("name", "txnAppId", "input", String.valueOf(appId)));
    }
    if (version < 0) {
      throw io.filecommit.errors.ErrorClass.DELTA_ILLEGAL_OPTION.error("txn version must be >= 0, got " + version,
          java.util.Map.of("name", "txnVersion", "input", Long.toString(version)));
    }
  }
}
