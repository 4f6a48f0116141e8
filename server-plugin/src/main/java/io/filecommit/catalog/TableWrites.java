package io.filecommit.catalog;

import io.filecommit.txn.CommandResult;
import io.filecommit.commands.FilledColumns;
import io.filecommit.commands.WriteIntoDelta;
import io.filecommit.commands.WriteMode;
import io.filecommit.errors.ErrorClass;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.expressions.filter.AlwaysTrue;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwriteV2;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.V1Write;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.sources.InsertableRelation;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's V1 fallback write of a {@link FileCommitTable} (Delta's {@code WriteIntoDeltaBuilder}):
 * Spark's {@code AppendData} (INSERT INTO, {@code writeTo(..).append()}, {@code insertInto}),
 * {@code OverwriteByExpression} (INSERT OVERWRITE: a truncate, or {@code REPLACE WHERE} a
 * predicate, which becomes {@code replaceWhere}) and {@code OverwritePartitionsDynamic}
 * ({@code writeTo(..).overwritePartitions()}, INSERT OVERWRITE with dynamic partition overwrite:
 * {@code partitionOverwriteMode=dynamic}) run the plugin's {@link WriteIntoDelta}, then auto
 * compaction when the table asks for it.
 */
final class TableWrites {
  private TableWrites() {}

  /**
   * A write builder.
   *
   * @param session the session
   * @param path the table root
   * @param table the table's schema when the statement was analyzed (identity and generated columns
   *     an INSERT's column list leaves out are written as absent: {@link
   *     FilledColumns#withoutIdentityOrGenerated})
   * @param onCommit called with the result after the commit (a staged creation's bookkeeping), or null
   * @param info Spark's write info (its options are the writer's options)
   * @return the builder
   */
  static WriteBuilder builder(SparkSession session, String path, StructType table, Consumer<CommandResult> onCommit,
      LogicalWriteInfo info) {
    return new Builder(session, path, table, onCommit, new HashMap<>(info.options().asCaseSensitiveMap()));
  }

  /**
   * Runs a write through {@link WriteIntoDelta} and auto compaction.
   *
   * @param session the session
   * @param data the rows
   * @param path the table root
   * @param mode the save mode
   * @param partitionBy partition columns of a new table
   * @param options writer options
   * @param properties table properties of a new table
   * @return the commit
   * @throws io.filecommit.errors.FileCommitException what {@link WriteIntoDelta#run} throws
   */
  static CommandResult write(SparkSession session, Dataset<Row> data, String path, WriteMode mode,
      List<String> partitionBy, Map<String, String> options, Map<String, String> properties) {
    return Guard.run(session, options, () -> WriteIntoDelta.run(session, data, path, mode, partitionBy, options,
        properties, false, null, null));
  }

  private static final class Builder implements WriteBuilder, SupportsTruncate, SupportsOverwriteV2,
      SupportsDynamicOverwrite {
    private final SparkSession session;
    private final String path;
    private final StructType table;
    private final Consumer<CommandResult> onCommit;
    private final Map<String, String> options;
    private WriteMode mode = WriteMode.APPEND;

    Builder(SparkSession session, String path, StructType table, Consumer<CommandResult> onCommit,
        Map<String, String> options) {
      this.session = session;
      this.path = path;
      this.table = table;
      this.onCommit = onCommit;
      this.options = options;
    }

    @Override
    public WriteBuilder truncate() {
      mode = WriteMode.OVERWRITE;
      return this;
    }

    @Override
    public WriteBuilder overwrite(Predicate[] predicates) {
      mode = WriteMode.OVERWRITE;
      List<Predicate> real = Arrays.stream(predicates).filter(p -> !(p instanceof AlwaysTrue)).toList();
      if (!real.isEmpty()) {
        options.put(WriteIntoDelta.REPLACE_WHERE, real.stream().map(p -> "(" + p + ")")
            .collect(Collectors.joining(" AND ")));
      }
      return this;
    }

    @Override
    public WriteBuilder overwriteDynamicPartitions() {
      mode = WriteMode.OVERWRITE;
      options.put(WriteIntoDelta.PARTITION_OVERWRITE_MODE, "dynamic");
      return this;
    }

    @Override
    public Write build() {
      return new V1Write() {
        @Override
        public InsertableRelation toInsertableRelation() {
          return (data, ignored) -> {
            if (!(data instanceof Dataset<Row> rows)) {
              throw ErrorClass.FILECOMMIT_INVALID_ARGUMENT.error("Not a server-side DataFrame: " + data.getClass());
            }
            CommandResult r = write(session, FilledColumns.withoutIdentityOrGenerated(rows, table), path, mode, List.of(),
                options, Map.of());
            if (onCommit != null) {
              onCommit.accept(r);
            }
          };
        }
      };
    }
  }
}
