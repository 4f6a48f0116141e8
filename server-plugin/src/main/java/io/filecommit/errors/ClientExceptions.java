package io.filecommit.errors;

import java.util.Map;
import org.apache.spark.QueryContext;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.AnalysisException;

/**
 * Turns a {@link FileCommitException} into the exception a Spark Connect client receives, of the
 * JVM type its class calls for ({@link ClientExceptionType}), with the same error class, SQLSTATE,
 * message parameters, message and cause. Applied where a command or a data source call leaves the
 * server's code (the Connect layer), so the server's own code throws and catches {@link
 * FileCommitException} only.
 */
public final class ClientExceptions {
  private ClientExceptions() {}

  /**
   * The client-facing exception for {@code e}.
   *
   * @param e a server error
   * @return {@code e} itself for {@link ClientExceptionType#RUNTIME}, else a new exception of the
   *     class's type (a {@link SparkThrowable} with {@code e}'s class, SQLSTATE and parameters); a
   *     conflict is of Delta's {@code io.delta.exceptions} class for its error class where {@link
   *     DeltaConflictTypes} can make it
   */
  public static Throwable of(FileCommitException e) {
    String message = e.getMessage();
    Throwable typed = switch (ClientExceptionType.of(e.getCondition(), e.getSqlState())) {
      case ANALYSIS -> new Analysis(e, message);
      case ILLEGAL_ARGUMENT -> new IllegalArgument(e, message);
      case UNSUPPORTED_OPERATION -> new UnsupportedOperation(e, message);
      case CONCURRENT_MODIFICATION -> {
        ConcurrentModification delta = DeltaConflictTypes.of(e, message);
        yield delta != null ? delta : new ConcurrentModification(e, message);
      }
      case RUNTIME -> e;
    };
    if (typed != e) {
      typed.setStackTrace(e.getStackTrace());
    }
    return typed;
  }

  /**
   * Throws {@link #of}{@code (e)}, a checked {@link AnalysisException} included, from code that
   * declares none (Java checks exceptions at compile time only).
   *
   * @param e a server error
   * @return never returns; declared so callers can write {@code throw ClientExceptions.rethrow(e)}
   */
  public static RuntimeException rethrow(FileCommitException e) {
    return ClientExceptions.<RuntimeException>sneaky(of(e));
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }

  /** An analysis error ({@code org.apache.spark.sql.AnalysisException}, as Delta's {@code DeltaAnalysisException}). */
  public static final class Analysis extends AnalysisException {
    private static final long serialVersionUID = 1L;
    /** The class's SQLSTATE, kept for {@link #getSqlState()}. */
    private final String sqlState;

    Analysis(FileCommitException e, String message) {
      super(message, scala.Option.empty(), scala.Option.empty(), scala.Option.apply(e.getCause()),
          scala.Option.apply(e.getCondition()), scala.collection.immutable.Map.from(
              scala.jdk.javaapi.CollectionConverters.asScala(e.getMessageParameters())), new QueryContext[0]);
      this.sqlState = e.getSqlState();
    }

    /** {@return the class's SQLSTATE (Spark's own lookup knows only Spark's classes)} */
    @Override
    public String getSqlState() {
      return sqlState;
    }

    /** {@return the message as the server wrote it, {@code [CLASS] text}} */
    @Override
    public String getMessage() {
      return message();
    }
  }

  /**
   * A client-facing exception that answers Spark's {@link SparkThrowable} questions (error class,
   * SQLSTATE, message parameters) from the server error it carries.
   */
  public interface Carrying extends SparkThrowable {
    /** {@return the server error this exception carries} */
    FileCommitException error();

    @Override
    default String getCondition() {
      return error().getCondition();
    }

    @Override
    default String getSqlState() {
      return error().getSqlState();
    }

    @Override
    default Map<String, String> getMessageParameters() {
      return error().getMessageParameters();
    }
  }

  /** An invalid argument ({@code java.lang.IllegalArgumentException}, as Delta's {@code DeltaIllegalArgumentException}). */
  public static final class IllegalArgument extends IllegalArgumentException implements Carrying {
    private static final long serialVersionUID = 1L;
    /** The server error this exception carries to the client (class, SQLSTATE, parameters). */
    private final FileCommitException error;

    IllegalArgument(FileCommitException e, String message) {
      super(message, e.getCause());
      this.error = e;
    }

    @Override
    public FileCommitException error() {
      return error;
    }
  }

  /** An unsupported operation ({@code java.lang.UnsupportedOperationException}, as Delta's {@code DeltaUnsupportedOperationException}). */
  public static final class UnsupportedOperation extends UnsupportedOperationException implements Carrying {
    private static final long serialVersionUID = 1L;
    /** The server error this exception carries to the client (class, SQLSTATE, parameters). */
    private final FileCommitException error;

    UnsupportedOperation(FileCommitException e, String message) {
      super(message, e.getCause());
      this.error = e;
    }

    @Override
    public FileCommitException error() {
      return error;
    }
  }

  /**
   * A commit conflict ({@code java.util.ConcurrentModificationException}, as Delta's {@code
   * io.delta.exceptions}); {@link #of} raises the subclass named as Delta's class for the error
   * class ({@code io.delta.exceptions.ConcurrentAppendException}, ..., made by {@link
   * DeltaConflictTypes}) where it can.
   */
  public static class ConcurrentModification extends java.util.ConcurrentModificationException
      implements Carrying {
    private static final long serialVersionUID = 1L;
    /** The server error this exception carries to the client (class, SQLSTATE, parameters). */
    private final FileCommitException error;

    /**
     * A conflict carrying {@code e}.
     *
     * @param e the server error (class, SQLSTATE, parameters, cause)
     * @param message the client's message
     */
    protected ConcurrentModification(FileCommitException e, String message) {
      super(message, e.getCause());
      this.error = e;
    }

    @Override
    public FileCommitException error() {
      return error;
    }
  }
}
