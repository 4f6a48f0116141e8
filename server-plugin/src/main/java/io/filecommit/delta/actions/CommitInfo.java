package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Map;

/**
 * Delta {@code commitInfo} action (protocol "Commit Provenance Information", "In-Commit
 * Timestamps"; Delta's {@code CommitInfo}): provenance of one commit. Free form in the protocol;
 * the fields here are the ones Delta writes. Parameters and metrics are strings when filecommit
 * writes them; other writers' commits may carry other JSON values, kept as Jackson reads them.
 *
 * @param inCommitTimestamp the in-commit timestamp (ms since the epoch), or null when the table
 *     has none
 * @param timestamp commit time, ms since the epoch
 * @param userId who committed (Delta writes the committing user's id; filecommit the verified
 *     principal of the session when the server authenticates its clients), or null
 * @param userName who committed, by name (filecommit: the verified principal, as {@code userId}), or null
 * @param operation the operation name, e.g. {@code WRITE}, {@code DELETE}, {@code MERGE}
 * @param operationParameters the operation's parameters
 * @param readVersion the version the transaction read, or null for a new table
 * @param isolationLevel {@code Serializable} or {@code WriteSerializable}
 * @param isBlindAppend whether the commit only adds files without reading the table
 * @param operationMetrics the operation's metrics
 * @param engineInfo the writer, e.g. {@code filecommit/0.1.0 Apache-Spark/4.3.0}
 * @param txnId the committing transaction's unique id (a UUID); lets a writer recognise its own
 *     commit when the answer of the store was lost
 * @param userMetadata the writer's free text (Delta's writer option {@code userMetadata}), or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"inCommitTimestamp", "timestamp", "userId", "userName", "operation", "operationParameters", "readVersion",
    "isolationLevel", "isBlindAppend", "operationMetrics", "engineInfo", "txnId", "userMetadata"})
public record CommitInfo(
    Long inCommitTimestamp,
    Long timestamp,
    String userId,
    String userName,
    String operation,
    Map<String, Object> operationParameters,
    Long readVersion,
    String isolationLevel,
    @JsonProperty("isBlindAppend") Boolean isBlindAppend,
    Map<String, Object> operationMetrics,
    String engineInfo,
    String txnId,
    String userMetadata) implements Action {

  /**
   * The canonical constructor, the one JSON is read with.
   *
   * @param inCommitTimestamp the in-commit timestamp (ms since the epoch), or null
   * @param timestamp commit time, ms since the epoch
   * @param userId who committed, or null
   * @param userName who committed, by name, or null
   * @param operation the operation name
   * @param operationParameters the operation's parameters
   * @param readVersion the version the transaction read, or null for a new table
   * @param isolationLevel {@code Serializable} or {@code WriteSerializable}
   * @param isBlindAppend whether the commit only adds files without reading the table
   * @param operationMetrics the operation's metrics
   * @param engineInfo the writer
   * @param txnId the committing transaction's unique id
   * @param userMetadata the writer's free text, or null
   */
  @com.fasterxml.jackson.annotation.JsonCreator
  public CommitInfo {}

  /**
   * A commitInfo without a user.
   *
   * @param inCommitTimestamp the in-commit timestamp (ms since the epoch), or null
   * @param timestamp commit time, ms since the epoch
   * @param operation the operation name
   * @param operationParameters the operation's parameters
   * @param readVersion the version the transaction read, or null for a new table
   * @param isolationLevel {@code Serializable} or {@code WriteSerializable}
   * @param isBlindAppend whether the commit only adds files without reading the table
   * @param operationMetrics the operation's metrics
   * @param engineInfo the writer
   * @param txnId the committing transaction's unique id
   * @param userMetadata the writer's free text, or null
   */
  public CommitInfo(Long inCommitTimestamp, Long timestamp, String operation, Map<String, Object> operationParameters,
      Long readVersion, String isolationLevel, Boolean isBlindAppend, Map<String, Object> operationMetrics,
      String engineInfo, String txnId, String userMetadata) {
    this(inCommitTimestamp, timestamp, null, null, operation, operationParameters, readVersion, isolationLevel,
        isBlindAppend, operationMetrics, engineInfo, txnId, userMetadata);
  }

  /**
   * A commitInfo without {@code userMetadata}.
   *
   * @param inCommitTimestamp the in-commit timestamp (ms since the epoch), or null
   * @param timestamp commit time, ms since the epoch
   * @param operation the operation name
   * @param operationParameters the operation's parameters
   * @param readVersion the version the transaction read, or null for a new table
   * @param isolationLevel {@code Serializable} or {@code WriteSerializable}
   * @param isBlindAppend whether the commit only adds files without reading the table
   * @param operationMetrics the operation's metrics
   * @param engineInfo the writer
   * @param txnId the committing transaction's unique id
   */
  public CommitInfo(Long inCommitTimestamp, Long timestamp, String operation, Map<String, Object> operationParameters,
      Long readVersion, String isolationLevel, Boolean isBlindAppend, Map<String, Object> operationMetrics,
      String engineInfo, String txnId) {
    this(inCommitTimestamp, timestamp, operation, operationParameters, readVersion, isolationLevel, isBlindAppend,
        operationMetrics, engineInfo, txnId, null);
  }

  /** The writer name filecommit puts in {@code engineInfo}, before Spark's version. */
  public static final String ENGINE = "filecommit/0.1.0";

  /** {@return the commit's timestamp as readers take it, ms since the epoch: the in-commit timestamp when present} */
  public long effectiveTimestamp() {
    return inCommitTimestamp != null ? inCommitTimestamp : timestamp == null ? 0 : timestamp;
  }

  @Override
  public String actionName() {
    return "commitInfo";
  }
}
