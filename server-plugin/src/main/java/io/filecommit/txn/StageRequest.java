package io.filecommit.txn;

/**
 * A request to stage a command's commit instead of publishing it (see {@link StagedCommit}).
 *
 * @param expiresAfterMs how long the staged commit may be published, ms after it is staged (> 0);
 *     after that the server deletes its files
 * @param foreignFiles whether the staged files were written by another process: abort and expiry
 *     then delete none of them
 */
public record StageRequest(long expiresAfterMs, boolean foreignFiles) {
  /**
   * A request for files the server writes itself.
   *
   * @param expiresAfterMs how long the staged commit may be published, ms after it is staged (> 0)
   */
  public StageRequest(long expiresAfterMs) {
    this(expiresAfterMs, false);
  }

  /**
   * Checks the expiry.
   *
   * @param expiresAfterMs how long the staged commit may be published, ms after it is staged
   * @param foreignFiles whether the staged files were written by another process
   * @throws IllegalArgumentException when {@code expiresAfterMs <= 0}
   */
  public StageRequest {
    if (expiresAfterMs <= 0) {
      throw new IllegalArgumentException("expiresAfterMs must be > 0, got " + expiresAfterMs);
    }
  }
}
