package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.delta.actions.Protocol;
import io.filecommit.errors.FileCommitException;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Protocol changes by version or feature name, in the weakest form Delta 4 writes (no Spark). */
class ProtocolChangesTest {
  private static final Protocol DEFAULT = Protocol.legacy(1, 2);

  @Test
  void legacyVersionsImplyTheirFeatures() {
    assertEquals(Set.of("appendOnly", "invariants"), ProtocolChanges.features(DEFAULT));
    assertEquals(Set.of("appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
        "columnMapping"), ProtocolChanges.features(Protocol.legacy(2, 5)));
    // reader 2 implies columnMapping only with writer 5 or more
    assertFalse(ProtocolChanges.features(Protocol.legacy(2, 3)).contains("columnMapping"));
  }

  @Test
  void upgradesMergeAndNormalize() {
    assertEquals(Protocol.legacy(1, 3), ProtocolChanges.upgraded(DEFAULT, 1, 3));
    assertEquals(Protocol.legacy(2, 5), ProtocolChanges.upgraded(DEFAULT, 2, 5));
    // versions alone add no feature to a table on (1, 2): Delta keeps the weakest form
    assertSame(DEFAULT, ProtocolChanges.upgraded(DEFAULT, 1, 7));
    assertSame(DEFAULT, ProtocolChanges.upgraded(DEFAULT, 3, 7));
    // never lowered
    assertEquals(Protocol.legacy(1, 4), ProtocolChanges.upgraded(Protocol.legacy(1, 4), 1, 2));
    for (int[] bad : new int[][] {{0, 2}, {4, 7}, {1, 8}, {1, 0}}) {
      FileCommitException e = assertThrows(FileCommitException.class,
          () -> ProtocolChanges.upgraded(DEFAULT, bad[0], bad[1]));
      assertEquals("DELTA_INVALID_PROTOCOL_VERSION", e.getCondition());
    }
  }

  @Test
  void featuresAreAddedWithWhatTheyNeed() {
    Protocol dv = ProtocolChanges.withFeature(DEFAULT, "deletionVectors");
    assertEquals(new Protocol(3, 7, Set.of("deletionVectors"), Set.of("appendOnly", "deletionVectors", "invariants")),
        dv);
    assertEquals(new TreeSet<>(Set.of("appendOnly", "domainMetadata", "invariants", "rowTracking")),
        ProtocolChanges.withFeature(DEFAULT, "rowTracking").writerFeatures());
    assertEquals(1, ProtocolChanges.withFeature(DEFAULT, "rowTracking").minReaderVersion());
    assertEquals(Protocol.legacy(1, 3), ProtocolChanges.withFeature(DEFAULT, "checkConstraints"));
    assertSame(dv, ProtocolChanges.withFeature(dv, "deletionVectors"));
    assertEquals("DELTA_UNSUPPORTED_FEATURES_IN_CONFIG", assertThrows(FileCommitException.class,
        () -> ProtocolChanges.withFeature(DEFAULT, "noSuchFeature")).getCondition());
    assertEquals("DELTA_UNSUPPORTED_FEATURES_FOR_WRITE", assertThrows(FileCommitException.class,
        () -> ProtocolChanges.withFeature(DEFAULT, "variantType")).getCondition());
  }

  @Test
  void droppingAFeatureNormalizesBack() {
    Protocol dv = ProtocolChanges.withFeature(DEFAULT, "deletionVectors");
    Protocol both = ProtocolChanges.withFeature(dv, "checkConstraints");
    assertTrue(both.writerFeatures().contains("checkConstraints"));
    assertEquals(dv, ProtocolChanges.without(both, "checkConstraints"));
    assertEquals(DEFAULT, ProtocolChanges.without(Protocol.legacy(1, 3), "checkConstraints"));
  }
}
