package io.filecommit.read;

import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EvalMode;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Predicate$;
import org.apache.spark.sql.catalyst.types.DataTypeUtils$;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's view of the files of one Delta scan (Delta's {@code TahoeFileIndex}): the files come from
 * the log, never from listing directories; each file has its own partition values (protocol
 * "Partition Value Serialization": the stored strings, never decoded from directory names, cast
 * to the column types as Delta casts them, in the session time zone), so column-mapped tables whose files sit under random prefixes read
 * right. {@link #listFiles} prunes by the partition filters (evaluated on the typed values) and
 * skips files by their statistics for the data filters ({@link DataSkipping}).
 *
 * <p>Counts of the last listing ({@link #filesInScan()}, {@link #filesSelected()}) are kept for
 * the scan's description.
 */
public final class DeltaFileIndex implements FileIndex {
  private final Path root;
  private final FileSystem fs;
  private final StructType partitionSchema;
  private final List<String> physicalPartitionNames;
  private final List<IndexedFile> files;
  private final ZoneId zone;
  private final AtomicLong selected = new AtomicLong(-1);

  /**
   * @param root the qualified table root (relative log paths resolve against it)
   * @param fs the table's file system (qualifies absolute log paths)
   * @param partitionSchema the scan's partition columns (logical names, types), then its constant
   *     columns
   * @param physicalPartitionNames the keys of the table's partition columns in {@code
   *     partitionValues}, in {@code partitionSchema} order (fewer than its fields: the rest are
   *     constants)
   * @param files the files
   * @param zone the session time zone (timestamp partition values)
   */
  public DeltaFileIndex(Path root, FileSystem fs, StructType partitionSchema, List<String> physicalPartitionNames,
      List<IndexedFile> files, ZoneId zone) {
    this.root = root;
    this.fs = fs;
    this.partitionSchema = partitionSchema;
    this.physicalPartitionNames = physicalPartitionNames;
    this.files = files;
    this.zone = zone;
  }

  /** The qualified path of a log path, as Spark reports it in {@code _metadata.file_path}. */
  static Path qualified(FileSystem fs, Path root, String logPath) {
    Path p = new Path(java.net.URI.create(logPath));
    return fs.makeQualified(p.isAbsolute() || p.toUri().getScheme() != null ? p : new Path(root, p));
  }

  @Override
  public scala.collection.immutable.Seq<Path> rootPaths() {
    return CollectionConverters.asScala(List.of(root)).toList();
  }

  @Override
  public scala.collection.immutable.Seq<PartitionDirectory> listFiles(
      scala.collection.immutable.Seq<Expression> partitionFilters, scala.collection.immutable.Seq<Expression> dataFilters) {
    List<Expression> pf = CollectionConverters.asJava(partitionFilters);
    List<Expression> df = CollectionConverters.asJava(dataFilters);
    BasePredicate prune = pf.isEmpty() ? null : predicate(pf);
    Map<List<Object>, List<FileStatusWithMetadata>> groups = new LinkedHashMap<>();
    Map<List<Object>, InternalRow> rows = new LinkedHashMap<>();
    long count = 0;
    for (IndexedFile f : files) {
      Object[] values = values(f);
      List<Object> key = Arrays.asList(values);
      InternalRow row = rows.get(key);
      if (row == null) {
        row = new GenericInternalRow(values);
        rows.put(key, row);
      }
      if (prune != null && !prune.eval(row)) {
        continue;
      }
      if (!DataSkipping.mayMatch(f.stats(), df)) {
        continue;
      }
      FileStatus st = new FileStatus(f.size(), false, 0, 0, f.modificationTime(), qualified(fs, root, f.path()));
      groups.computeIfAbsent(key, k -> new ArrayList<>()).add(
          new FileStatusWithMetadata(st, scala.collection.immutable.Map$.MODULE$.empty()));
      count++;
    }
    selected.set(count);
    List<PartitionDirectory> out = new ArrayList<>();
    groups.forEach((k, v) -> out.add(new PartitionDirectory(rows.get(k), CollectionConverters.asScala(v).toList())));
    return CollectionConverters.asScala(out).toList();
  }

  /** The typed partition values of a file, then its constants. */
  private Object[] values(IndexedFile f) {
    int n = physicalPartitionNames.size();
    Object[] values = new Object[partitionSchema.fields().length];
    for (int i = 0; i < n; i++) {
      String raw = f.partitionValues().get(physicalPartitionNames.get(i));
      values[i] = typedPartitionValue(raw, partitionSchema.fields()[i].dataType(), zone);
    }
    System.arraycopy(f.constants(), 0, values, n, f.constants().length);
    return values;
  }

  /**
   * One partition value as stored in the log, typed: the string is taken exactly as stored (never
   * path-unescaped: it is not a directory name), the empty string and null are null, anything else
   * is cast to the column type as Delta's {@code TahoeFileIndex} casts it (a non-ANSI cast in the
   * session time zone; protocol "Partition Value Serialization").
   *
   * @param raw the value from {@code partitionValues}, or null
   * @param type the partition column's type
   * @param zone the session time zone (timestamp values without an offset)
   * @return the Catalyst value, or null (also when the string does not cast)
   */
  static Object typedPartitionValue(String raw, DataType type, ZoneId zone) {
    if (raw == null || raw.isEmpty()) {
      return null;
    }
    return new Cast(Literal.create(raw, DataTypes.StringType), type, scala.Option.apply(zone.getId()),
        EvalMode.LEGACY()).eval(null);
  }

  /** The conjunction of the partition filters, bound to the partition schema by column name. */
  private BasePredicate predicate(List<Expression> filters) {
    Expression all = filters.get(0);
    for (int i = 1; i < filters.size(); i++) {
      all = new And(all, filters.get(i));
    }
    List<AttributeReference> schemaAttrs = CollectionConverters.asJava(DataTypeUtils$.MODULE$.toAttributes(partitionSchema));
    List<Attribute> input = new ArrayList<>();
    List<Attribute> refs = CollectionConverters.asJava(all.references().toSeq());
    for (AttributeReference a : schemaAttrs) {
      Attribute match = a;
      for (Attribute r : refs) {
        if (r.name().equalsIgnoreCase(a.name())) {
          match = r;
        }
      }
      input.add(match);
    }
    BasePredicate p = Predicate$.MODULE$.create(all, CollectionConverters.asScala(input).toList());
    p.initialize(0);
    return p;
  }

  @Override
  public String[] inputFiles() {
    return files.stream().map(f -> qualified(fs, root, f.path()).toString()).distinct().toArray(String[]::new);
  }

  @Override
  public void refresh() {
    // The file list is the snapshot's: fixed.
  }

  @Override
  public long sizeInBytes() {
    long total = 0;
    for (IndexedFile f : files) {
      total += f.size();
    }
    return total;
  }

  @Override
  public StructType partitionSchema() {
    return partitionSchema;
  }

  /** {@return the number of files in the scan before pruning} */
  public int filesInScan() {
    return files.size();
  }

  /** {@return the number of files the last listing kept, -1 before the first} */
  public long filesSelected() {
    return selected.get();
  }

  @Override
  public String toString() {
    return "DeltaFileIndex(" + root + ", " + files.size() + " files" + (selected.get() >= 0 ? ", " + selected.get()
        + " selected" : "") + ")";
  }

  /** The partition schema's field names. */
  List<String> partitionNames() {
    List<String> names = new ArrayList<>();
    for (StructField f : partitionSchema.fields()) {
      names.add(f.name());
    }
    return names;
  }
}
