package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.actions.Action;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.CommitInfo;
import io.filecommit.delta.actions.DomainMetadata;
import io.filecommit.delta.actions.Metadata;
import io.filecommit.delta.actions.Protocol;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.delta.actions.SetTransaction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Version checksums (protocol "Version Checksum File"): incremental derivation, histogram, mismatches. */
class VersionChecksumTest {
  private static final Metadata MD = new Metadata("id", null, null,
      "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}",
      List.of(), Map.of(), 0L);

  private static AddFile add(String path, long size) {
    return new AddFile(path, Map.of(), size, 0L, true, null, null, null);
  }

  private static VersionChecksum created() {
    return new VersionChecksum(null, 0, 0, 1, 1, null, List.of(), List.of(), null, null,
        VersionChecksum.Histogram.empty()).next(List.<Action>of(Protocol.DEFAULT, MD, add("a", 100), add("b", 9000)));
  }

  @Test
  void histogramBinsAreDeltasDefaults() {
    long[] b = VersionChecksum.DEFAULT_BINS;
    assertEquals(95, b.length);
    assertEquals(0, b[0]);
    assertEquals(8192, b[1]);
    assertEquals(150994944L, b[35]); // 144 MB
    assertEquals(274877906944L, b[94]); // 256 GB
    for (int i = 1; i < b.length; i++) {
      assertTrue(b[i] > b[i - 1]);
    }
  }

  @Test
  void derivedFromThePreviousChecksum() {
    VersionChecksum v0 = created();
    assertEquals(9100, v0.tableSizeBytes());
    assertEquals(2, v0.numFiles());
    assertEquals(1, v0.fileSizeHistogram().fileCounts()[0]);
    assertEquals(1, v0.fileSizeHistogram().fileCounts()[1]); // 9000 >= 8192
    VersionChecksum v1 = v0.next(List.of(new CommitInfo(77L, 77L, "DELETE", null, null, null, null, null, null, null),
        new RemoveFile("a", 5L, true, true, Map.of(), 100L, null, null, null), new SetTransaction("app", 3, 5L),
        new DomainMetadata("d", "{}", false)));
    assertEquals(9000, v1.tableSizeBytes());
    assertEquals(1, v1.numFiles());
    assertEquals(77L, v1.inCommitTimestampOpt());
    assertEquals(List.of(new SetTransaction("app", 3, 5L)), v1.setTransactions());
    assertEquals(1, v1.domainMetadata().size());
    assertEquals(0, v1.fileSizeHistogram().fileCounts()[0]);
    VersionChecksum v2 = v1.next(List.of(new DomainMetadata("d", "{}", true)));
    assertEquals(List.of(), v2.domainMetadata());
    assertNull(v2.inCommitTimestampOpt());
    // A remove without a size cannot be derived.
    assertNull(v2.next(List.of(new RemoveFile("b", 5L, true, false, null, null, null, null, null))));
  }

  @Test
  void comparedAsDeltaComparesThem() throws Exception {
    VersionChecksum v0 = created();
    VersionChecksum state = VersionChecksum.of(List.of(add("a", 100), add("b", 9000)), Protocol.DEFAULT, MD, null,
        List.of(), null);
    assertEquals(List.of(), v0.mismatches(state));
    VersionChecksum bad = Actions.MAPPER.readValue(
        Actions.MAPPER.writeValueAsString(v0).replace("\"numFiles\":2", "\"numFiles\":3"), VersionChecksum.class);
    assertEquals(List.of("numFiles"), bad.mismatches(state));
    // Delta-Spark's older name of the histogram is read too.
    VersionChecksum legacy = Actions.MAPPER.readValue(
        Actions.MAPPER.writeValueAsString(v0).replace("fileSizeHistogram", "histogramOpt"), VersionChecksum.class);
    assertArrayEquals(v0.fileSizeHistogram().totalBytes(), legacy.fileSizeHistogram().totalBytes());
  }
}
