package io.filecommit.delta;

/**
 * A write that cannot proceed because of the table's state: the table already exists in mode
 * error-if-exists, a concurrent commit conflicts, or the commit could not be placed. Nothing of the
 * failed write is committed. Reaches Python clients as a Spark Connect exception carrying this
 * message.
 */
public class DeltaWriteException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what went wrong, naming the table path and version involved
   */
  public DeltaWriteException(String message) {
    super(message);
  }
}
