package io.filecommit.commands.merge;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.delta.actions.Actions;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.errors.ErrorClass;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;

/**
 * One WHEN clause of a MERGE (Delta's {@code DeltaMergeIntoClause}).
 *
 * @param kind the clause kind
 * @param condition extra condition, or null for always
 * @param assignments table column (case-insensitive) -> value, for updates and inserts
 * @param allColumns {@code UPDATE SET *} / {@code INSERT *}: every table column from the source
 *     column of the same name
 */
public record MergeClause(Kind kind, Column condition, Map<String, Column> assignments, boolean allColumns) {
  /** Kinds of WHEN clauses. */
  public enum Kind {
    /** WHEN MATCHED THEN UPDATE. */
    MATCHED_UPDATE,
    /** WHEN MATCHED THEN DELETE. */
    MATCHED_DELETE,
    /** WHEN NOT MATCHED THEN INSERT. */
    NOT_MATCHED_INSERT,
    /** WHEN NOT MATCHED BY SOURCE THEN UPDATE. */
    NOT_MATCHED_BY_SOURCE_UPDATE,
    /** WHEN NOT MATCHED BY SOURCE THEN DELETE. */
    NOT_MATCHED_BY_SOURCE_DELETE;

    /** WHEN MATCHED. */
    boolean matched() {
      return this == MATCHED_UPDATE || this == MATCHED_DELETE;
    }

    /** WHEN NOT MATCHED BY SOURCE. */
    boolean bySource() {
      return this == NOT_MATCHED_BY_SOURCE_UPDATE || this == NOT_MATCHED_BY_SOURCE_DELETE;
    }

    /** A DELETE action. */
    boolean delete() {
      return this == MATCHED_DELETE || this == NOT_MATCHED_BY_SOURCE_DELETE;
    }

    /** Delta's {@code actionType} in commitInfo. */
    String actionType() {
      return delete() ? "delete" : this == NOT_MATCHED_INSERT ? "insert" : "update";
    }
  }

  /**
   * Checks the clause list (Delta's rules): at least one clause; of each kind group (MATCHED, NOT
   * MATCHED, NOT MATCHED BY SOURCE) only the last may omit its condition; deletes carry no
   * assignments; updates and inserts carry assignments or {@code allColumns}.
   *
   * @param clauses the clauses in order
   * @throws io.filecommit.errors.FileCommitException {@code DELTA_MERGE_MISSING_WHEN}, {@code
   *     DELTA_NON_LAST_*_CLAUSE_OMIT_CONDITION}, {@code FILECOMMIT_MALFORMED_COMMAND}
   */
  static void check(List<MergeClause> clauses) {
    if (clauses.isEmpty()) {
      throw ErrorClass.DELTA_MERGE_MISSING_WHEN.error("There must be at least one WHEN clause in a MERGE");
    }
    checkOmittedConditions(clauses.stream().filter(c -> c.kind().matched()).toList(),
        ErrorClass.DELTA_NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION, "MATCHED");
    checkOmittedConditions(clauses.stream().filter(c -> c.kind() == Kind.NOT_MATCHED_INSERT).toList(),
        ErrorClass.DELTA_NON_LAST_NOT_MATCHED_CLAUSE_OMIT_CONDITION, "NOT MATCHED");
    checkOmittedConditions(clauses.stream().filter(c -> c.kind().bySource()).toList(),
        ErrorClass.DELTA_NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION, "NOT MATCHED BY SOURCE");
    for (MergeClause c : clauses) {
      if (c.kind().delete() && (!c.assignments().isEmpty() || c.allColumns())) {
        throw DeltaErrors.malformed("MERGE " + c.kind() + " clause takes no assignments");
      }
      if (!c.kind().delete() && c.assignments().isEmpty() && !c.allColumns()) {
        throw DeltaErrors.malformed("MERGE " + c.kind() + " clause needs assignments or all columns");
      }
    }
  }

  private static void checkOmittedConditions(List<MergeClause> group, ErrorClass cls, String name) {
    for (int i = 0; i < group.size() - 1; i++) {
      if (group.get(i).condition() == null) {
        throw cls.error("When there are several " + name + " clauses in a MERGE, only the last one may omit the condition");
      }
    }
  }

  /**
   * The clauses of one group as Delta describes them in commitInfo ({@code matchedPredicates},
   * {@code notMatchedPredicates}, {@code notMatchedBySourcePredicates}): a JSON array of {@code
   * {"predicate": <sql or null>, "actionType": "update"|"delete"|"insert"}}.
   *
   * @param clauses every clause of the MERGE
   * @param matched the MATCHED group
   * @param bySource the NOT MATCHED BY SOURCE group (neither: NOT MATCHED)
   * @return the JSON text
   */
  static String describe(List<MergeClause> clauses, boolean matched, boolean bySource) {
    ArrayNode out = Actions.MAPPER.createArrayNode();
    for (MergeClause c : clauses) {
      if (c.kind().matched() == matched && c.kind().bySource() == bySource
          && (matched || bySource || c.kind() == Kind.NOT_MATCHED_INSERT)) {
        ObjectNode o = out.addObject();
        if (c.condition() == null) {
          o.putNull("predicate");
        } else {
          o.put("predicate", c.condition().toString());
        }
        o.put("actionType", c.kind().actionType());
      }
    }
    return out.toString();
  }
}
