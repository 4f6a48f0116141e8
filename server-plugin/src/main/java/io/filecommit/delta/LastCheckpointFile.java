package io.filecommit.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.delta.actions.Actions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

/**
 * The {@code _last_checkpoint} file of a V2 checkpoint (protocol "Last Checkpoint File Schema"):
 * {@code version}, {@code size}, {@code sizeInBytes}, {@code numOfAddFiles}, then the {@code
 * v2Checkpoint} object Delta's {@code LastCheckpointV2} writes (the checkpoint file's {@code path},
 * {@code sizeInBytes}, {@code modificationTime}; its {@code nonFileActions} and {@code
 * sidecarFiles} when at most {@link #INLINE_LIMIT} each, as Delta's {@code
 * lastCheckpoint.nonFileActions.threshold} / {@code lastCheckpoint.sidecars.threshold}), and the
 * {@code checksum} of protocol "JSON checksum" (MD5 of the canonicalized JSON, lower-case hex).
 */
final class LastCheckpointFile {
  /** Most non-file actions / sidecars copied into {@code v2Checkpoint} (Delta's default, 30). */
  static final int INLINE_LIMIT = 30;

  private LastCheckpointFile() {}

  /**
   * Writes {@code _last_checkpoint} for a V2 checkpoint (overwriting it).
   *
   * @param log the table's log
   * @param version the checkpoint's version
   * @param size actions in the checkpoint (its own rows plus the sidecars' rows)
   * @param bytes bytes of the checkpoint file and its sidecars
   * @param adds add actions in the checkpoint
   * @param checkpoint the UUID-named checkpoint file
   * @param nonFileActions its non-file actions, one JSON line each (checkpointMetadata included)
   * @param sidecars its {@code sidecar} actions, one JSON line each
   * @throws IOException when the write fails
   */
  static void writeV2(DeltaLog log, long version, long size, long bytes, long adds, FileStatus checkpoint,
      List<String> nonFileActions, List<String> sidecars) throws IOException {
    ObjectNode last = Actions.MAPPER.createObjectNode();
    last.put("version", version).put("size", size).put("sizeInBytes", bytes).put("numOfAddFiles", adds);
    ObjectNode v2 = last.putObject("v2Checkpoint");
    v2.put("path", checkpoint.getPath().getName()).put("sizeInBytes", checkpoint.getLen())
        .put("modificationTime", checkpoint.getModificationTime());
    if (nonFileActions.size() <= INLINE_LIMIT) {
      ArrayNode a = v2.putArray("nonFileActions");
      for (String line : nonFileActions) {
        a.add(Actions.MAPPER.readTree(line));
      }
    }
    if (sidecars.size() <= INLINE_LIMIT) {
      ArrayNode a = v2.putArray("sidecarFiles");
      for (String line : sidecars) {
        a.add(Actions.MAPPER.readTree(line).path("sidecar"));
      }
    }
    last.put("checksum", checksum(last));
    log.logStore().write(new Path(log.logPath(), "_last_checkpoint"),
        List.of(Actions.MAPPER.writeValueAsString(last)).iterator(), true, log.conf());
  }

  /**
   * The checksum of a last-checkpoint JSON object (protocol "JSON checksum"): every leaf as {@code
   * path=value} (path segments joined by {@code +}, names and strings quoted and URL-encoded,
   * array positions as numbers), the top-level {@code checksum} left out, sorted, joined by {@code
   * ,}, then the MD5 digest as 32 lower-case hex digits.
   *
   * @param json the object (an {@code ObjectNode})
   * @return the checksum
   */
  static String checksum(JsonNode json) {
    List<String> pairs = new ArrayList<>();
    ObjectNode withoutChecksum = ((ObjectNode) json).deepCopy();
    withoutChecksum.remove("checksum");
    leaves(withoutChecksum, new ArrayList<>(), pairs);
    pairs.sort(null);
    try {
      byte[] md5 = MessageDigest.getInstance("MD5").digest(String.join(",", pairs).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(md5);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void leaves(JsonNode node, List<String> path, List<String> out) {
    if (node.isObject()) {
      for (Map.Entry<String, JsonNode> e : node.properties()) {
        path.add(encode(e.getKey()));
        leaves(e.getValue(), path, out);
        path.remove(path.size() - 1);
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        path.add(Integer.toString(i));
        leaves(node.get(i), path, out);
        path.remove(path.size() - 1);
      }
    } else {
      out.add(String.join("+", path) + "=" + value(node));
    }
  }

  private static String value(JsonNode leaf) {
    return leaf.isTextual() ? encode(leaf.asText()) : leaf.asText();
  }

  /** A name or string value: quoted, every UTF-8 octet but {@code a-zA-Z0-9-._~} as {@code %XX}. */
  private static String encode(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (x & 0xff);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
        b.append(c);
      } else {
        b.append('%').append(String.format("%02X", x & 0xff));
      }
    }
    return b.append('"').toString();
  }
}
