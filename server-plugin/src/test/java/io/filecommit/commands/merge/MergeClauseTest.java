package io.filecommit.commands.merge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.filecommit.errors.FileCommitException;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;

/** MERGE's clause rules (Delta's). */
class MergeClauseTest {
  private static MergeClause clause(MergeClause.Kind kind, String condition) {
    boolean delete = kind == MergeClause.Kind.MATCHED_DELETE || kind == MergeClause.Kind.NOT_MATCHED_BY_SOURCE_DELETE;
    return new MergeClause(kind, condition == null ? null : functions.expr(condition), Map.of(), !delete);
  }

  @Test
  void mergeClauseRulesAreDeltas() {
    assertEquals("DELTA_MERGE_MISSING_WHEN",
        assertThrows(FileCommitException.class, () -> MergeClause.check(List.of())).getCondition());
    assertEquals("DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION", assertThrows(FileCommitException.class, () ->
        MergeClause.check(List.of(clause(MergeClause.Kind.MATCHED_DELETE, null),
            clause(MergeClause.Kind.MATCHED_UPDATE, "s.v > 1")))).getCondition());
    assertEquals("DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION", assertThrows(FileCommitException.class, () ->
        MergeClause.check(List.of(clause(MergeClause.Kind.NOT_MATCHED_INSERT, null),
            clause(MergeClause.Kind.NOT_MATCHED_INSERT, null)))).getCondition());
    assertEquals("DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION", assertThrows(FileCommitException.class,
        () -> MergeClause.check(List.of(clause(MergeClause.Kind.NOT_MATCHED_BY_SOURCE_DELETE, null),
            clause(MergeClause.Kind.NOT_MATCHED_BY_SOURCE_UPDATE, null)))).getCondition());
    // The last clause of each kind may omit its condition; kinds do not constrain each other.
    MergeClause.check(List.of(clause(MergeClause.Kind.MATCHED_DELETE, "s.v < 0"),
        clause(MergeClause.Kind.MATCHED_UPDATE, null), clause(MergeClause.Kind.NOT_MATCHED_INSERT, null),
        clause(MergeClause.Kind.NOT_MATCHED_BY_SOURCE_DELETE, null)));
  }
}
