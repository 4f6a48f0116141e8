package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * JSON form of Delta log actions: one action per line, wrapped by its name (protocol "Delta Log
 * Entries"; Delta's {@code SingleAction}). Every action is a Jackson-serialized record of this
 * package; field names and presence follow the protocol ({@code partitionValues} always present,
 * null values as JSON null). Unknown fields and unknown action types of other writers are ignored
 * when reading.
 */
public final class Actions {
  /** Shared Jackson mapper (thread-safe for reading and writing). */
  public static final ObjectMapper MAPPER = new ObjectMapper();

  private Actions() {}

  /**
   * The log line of an action.
   *
   * @param action any action
   * @return {@code {"<name>":{...}}}, without newline
   */
  public static String toJson(Action action) {
    try {
      return MAPPER.writeValueAsString(Map.of(action.actionName(), action));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot serialize " + action.actionName() + " action", e);
    }
  }

  /**
   * Parses one log line.
   *
   * @param line {@code {"<name>":{...}}}
   * @return the action, or null for an action type filecommit does not model (e.g. {@code
   *     checkpointMetadata}, {@code sidecar})
   * @throws UncheckedIOException when the line is not valid JSON of a known action
   */
  public static Action parse(String line) {
    try {
      return MAPPER.readValue(line, SingleAction.class).unwrap();
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException("Unreadable Delta log action: " + abbreviate(line), e);
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }

  /** The wrapper of one log line: exactly one field is set. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  record SingleAction(SetTransaction txn, AddFile add, RemoveFile remove, Metadata metaData, Protocol protocol,
      AddCDCFile cdc, CommitInfo commitInfo, DomainMetadata domainMetadata) {
    Action unwrap() {
      Action[] all = {commitInfo, protocol, metaData, txn, add, remove, cdc, domainMetadata};
      for (Action a : all) {
        if (a != null) {
          return a;
        }
      }
      return null;
    }
  }
}
