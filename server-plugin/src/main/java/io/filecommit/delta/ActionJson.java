package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.actions.AddCDCFile;
import io.filecommit.actions.AddFile;
import io.filecommit.actions.DeletionVector;
import io.filecommit.actions.FileAction;
import io.filecommit.actions.RemoveFile;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * JSON form of Delta log actions: one action per line, wrapped by its name (protocol section
 * "Delta Log Entries"; reference table-formats.md "Delta log"). Field names and presence follow the
 * protocol: {@code partitionValues} is always present, null values as JSON null.
 */
public final class ActionJson {
  /** Shared Jackson mapper (thread-safe for reading and writing). */
  public static final ObjectMapper MAPPER = new ObjectMapper();

  private ActionJson() {}

  /** {@code {"protocol":{...}}} for a protocol action. */
  public static String protocol(Protocol p) {
    ObjectNode inner = MAPPER.createObjectNode();
    inner.put("minReaderVersion", p.minReaderVersion());
    inner.put("minWriterVersion", p.minWriterVersion());
    if (p.readerFeatures() != null) {
      p.readerFeatures().forEach(inner.putArray("readerFeatures")::add);
    }
    if (p.writerFeatures() != null) {
      p.writerFeatures().forEach(inner.putArray("writerFeatures")::add);
    }
    return wrap("protocol", inner);
  }

  /** {@code {"metaData":{...}}} for a metadata action. */
  public static String metadata(Metadata m) {
    ObjectNode inner = MAPPER.createObjectNode();
    inner.put("id", m.id());
    if (m.name() != null) {
      inner.put("name", m.name());
    }
    if (m.description() != null) {
      inner.put("description", m.description());
    }
    ObjectNode format = inner.putObject("format");
    format.put("provider", "parquet");
    format.putObject("options");
    inner.put("schemaString", m.schemaString());
    m.partitionColumns().forEach(inner.putArray("partitionColumns")::add);
    putMap(inner.putObject("configuration"), m.configuration());
    if (m.createdTime() != null) {
      inner.put("createdTime", m.createdTime());
    }
    return wrap("metaData", inner);
  }

  /**
   * The log line of a file action.
   *
   * @param action an AddFile, RemoveFile or AddCDCFile
   * @return {@code {"add":...}}, {@code {"remove":...}} or {@code {"cdc":...}}
   */
  public static String fileAction(FileAction action) {
    ObjectNode inner = MAPPER.createObjectNode();
    inner.put("path", action.path());
    putMap(inner.putObject("partitionValues"), action.partitionValues());
    if (action instanceof AddFile a) {
      inner.put("size", a.size());
      inner.put("modificationTime", a.modificationTime());
      inner.put("dataChange", a.dataChange());
      if (a.stats() != null) {
        inner.put("stats", a.stats());
      }
      if (!a.tags().isEmpty()) {
        putMap(inner.putObject("tags"), a.tags());
      }
      putDeletionVector(inner, a.deletionVector());
      return wrap("add", inner);
    } else if (action instanceof RemoveFile r) {
      inner.put("deletionTimestamp", r.deletionTimestamp());
      inner.put("dataChange", r.dataChange());
      inner.put("extendedFileMetadata", r.extendedFileMetadata());
      if (r.size() != null) {
        inner.put("size", r.size());
      }
      putDeletionVector(inner, r.deletionVector());
      return wrap("remove", inner);
    } else {
      AddCDCFile c = (AddCDCFile) action;
      inner.put("size", c.size());
      inner.put("dataChange", false);
      if (!c.tags().isEmpty()) {
        putMap(inner.putObject("tags"), c.tags());
      }
      return wrap("cdc", inner);
    }
  }

  /**
   * {@code {"txn":{"appId":..,"version":..,"lastUpdated":..}}} (protocol "Transaction Identifiers").
   *
   * @param appId application id
   * @param version the application's version
   * @param lastUpdated ms since the epoch
   * @return the log line
   */
  public static String txn(String appId, long version, long lastUpdated) {
    ObjectNode inner = MAPPER.createObjectNode();
    inner.put("appId", appId);
    inner.put("version", version);
    inner.put("lastUpdated", lastUpdated);
    return wrap("txn", inner);
  }

  /** {@code {"commitInfo":{...}}} from a prepared object. */
  public static String commitInfo(ObjectNode info) {
    return wrap("commitInfo", info);
  }

  private static void putDeletionVector(ObjectNode inner, DeletionVector dv) {
    if (dv == null) {
      return;
    }
    ObjectNode d = inner.putObject("deletionVector");
    d.put("storageType", dv.storageType());
    d.put("pathOrInlineDv", dv.pathOrInlineDv());
    if (dv.offset() != null) {
      d.put("offset", dv.offset());
    }
    d.put("sizeInBytes", dv.sizeInBytes());
    d.put("cardinality", dv.cardinality());
  }

  /** Parses a protocol action body. */
  static Protocol parseProtocol(JsonNode n) {
    return new Protocol(n.path("minReaderVersion").asInt(1), n.path("minWriterVersion").asInt(2),
        readSet(n.get("readerFeatures")), readSet(n.get("writerFeatures")));
  }

  private static Set<String> readSet(JsonNode n) {
    if (n == null || !n.isArray()) {
      return null;
    }
    Set<String> out = new LinkedHashSet<>();
    n.forEach(x -> out.add(x.asText()));
    return out;
  }

  /** Parses a metaData action body. */
  static Metadata parseMetadata(JsonNode n) {
    List<String> partitionColumns = new ArrayList<>();
    n.path("partitionColumns").forEach(c -> partitionColumns.add(c.asText()));
    return new Metadata(
        n.path("id").asText(),
        textOrNull(n.get("name")),
        textOrNull(n.get("description")),
        n.path("schemaString").asText(),
        partitionColumns,
        readMap(n.get("configuration")),
        n.hasNonNull("createdTime") ? n.get("createdTime").asLong() : null);
  }

  /** Parses an add action body. */
  static AddFile parseAdd(JsonNode n) {
    return new AddFile(
        n.path("path").asText(),
        readMap(n.get("partitionValues")),
        n.path("size").asLong(),
        n.path("modificationTime").asLong(),
        n.path("dataChange").asBoolean(true),
        textOrNull(n.get("stats")),
        readMap(n.get("tags")),
        null);
  }

  /** Parses a remove action body. */
  static RemoveFile parseRemove(JsonNode n) {
    return new RemoveFile(
        n.path("path").asText(),
        n.path("deletionTimestamp").asLong(),
        n.path("dataChange").asBoolean(true),
        n.path("extendedFileMetadata").asBoolean(false),
        readMap(n.get("partitionValues")),
        n.hasNonNull("size") ? n.get("size").asLong() : null);
  }

  private static String textOrNull(JsonNode n) {
    return n == null || n.isNull() ? null : n.asText();
  }

  private static Map<String, String> readMap(JsonNode n) {
    Map<String, String> m = new LinkedHashMap<>();
    if (n != null && n.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        m.put(e.getKey(), e.getValue().isNull() ? null : e.getValue().asText());
      }
    }
    return m;
  }

  private static void putMap(ObjectNode target, Map<String, String> values) {
    values.forEach((k, v) -> {
      if (v == null) {
        target.putNull(k);
      } else {
        target.put(k, v);
      }
    });
  }

  private static String wrap(String name, ObjectNode inner) {
    ObjectNode outer = MAPPER.createObjectNode();
    outer.set(name, inner);
    try {
      return MAPPER.writeValueAsString(outer);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("Cannot serialize " + name + " action", e);
    }
  }
}
