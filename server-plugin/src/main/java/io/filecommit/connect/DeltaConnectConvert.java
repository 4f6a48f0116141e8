package io.filecommit.connect;

import io.filecommit.commands.ConvertToDeltaCommand;
import io.filecommit.errors.ErrorClass;
import io.filecommit.proto.delta.connect.ConvertToDelta;
import io.filecommit.security.Privilege;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.common.DataTypeProtoConverter$;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Delta Connect's {@code convert_to_delta} relation ({@code DeltaTable.convertToDelta(spark,
 * identifier, partitionSchema)}), answered as Delta's {@code DeltaRelationPlugin} answers it: the
 * identifier ({@code parquet.`/path`}) and the partition schema (a DDL string or a struct type) are
 * read, the directory is converted at once by {@link ConvertToDeltaCommand}, and the answer is one
 * string row, column {@code value}: {@code delta.`<path as given>`}, which the client opens with
 * {@code DeltaTable.forName}.
 *
 * <p>The path is checked as every path door checks one, before anything is read: it lies under the
 * server's allowed roots ({@code FILECOMMIT_PATH_NOT_ALLOWED}) and the session's principal holds
 * OWNER on it (a convert creates a table). A catalog table's name is refused ({@code
 * FILECOMMIT_UNSUPPORTED_OPERATION}); the other errors are {@link ConvertToDeltaCommand}'s.
 */
final class DeltaConnectConvert {
  /** The answer's column (a Dataset of one string, as Delta's plugin makes it). */
  static final StructType RESULT = new StructType().add("value", DataTypes.StringType, true);

  private DeltaConnectConvert() {}

  /**
   * Converts the directory and answers with its identifier.
   *
   * @param c the message
   * @param planner the session's planner
   * @return the plan of the one result row
   * @throws io.filecommit.errors.FileCommitException see the class comment; {@code
   *     FILECOMMIT_MALFORMED_COMMAND} for a partition schema that is not a struct
   */
  static LogicalPlan plan(ConvertToDelta c, SparkConnectPlanner planner) {
    SparkSession session = planner.session();
    List<String> parts = DeltaConnectTables.nameParts(session, c.getIdentifier());
    StructType partitionSchema = null;
    if (c.hasPartitionSchemaStruct()) {
      DataType t = DataTypeProtoConverter$.MODULE$.toCatalystType(c.getPartitionSchemaStruct());
      if (!(t instanceof StructType s)) {
        throw ErrorClass.FILECOMMIT_MALFORMED_COMMAND.error("delta.connect.ConvertToDelta's partition schema is a "
            + t.simpleString() + ", not a struct", Map.of());
      }
      partitionSchema = s;
    } else if (c.hasPartitionSchemaString()) {
      partitionSchema = StructType.fromDDL(c.getPartitionSchemaString());
    }
    ConvertToDeltaCommand.Target target = ConvertToDeltaCommand.target(parts);
    String path = CommandInput.path(target.path(), planner, Privilege.OWNER);
    if (!target.delta()) {
      ConvertToDeltaCommand.run(session, path, partitionSchema);
    }
    String answer = "delta.`" + target.path().replace("`", "``") + "`";
    return DeltaConnectTables.rows(session, RESULT, List.of(RowFactory.create(answer)));
  }
}
