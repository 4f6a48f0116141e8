package io.filecommit.deletionvectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.filecommit.delta.KernelInternals;
import io.filecommit.delta.actions.Actions;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import scala.Tuple2;

/**
 * Builds the new deletion vectors of a DELETE or UPDATE on the executors (Delta's {@code
 * DeletionVectorBitmapGenerator} with {@code DeletionVectorWriter.createMapperToStoreDeletionVectors};
 * protocol "Deletion Vectors"). The matching rows arrive as (file, row index) pairs; each scan task
 * turns every run of consecutive rows of one file into a partial 64-bit RoaringBitmap (a scan task
 * reads its files one after another, so usually one partial per file and task); the partials are
 * shuffled by file and sorted by file, and a task then takes one file at a time: the file's partials
 * are ORed into one bitmap, unioned with the file's current deletion vector (read on the executor
 * by Delta Kernel), and written by the task's {@link DeletionVectorWriter} into the task's one DV
 * file. Only descriptors come back to the driver.
 *
 * <p>Memory: a task holds the bitmap of one file (plus one partial being read, and Spark's sort
 * buffer of serialized partials, which spills); the driver holds one small record per touched
 * file, never row indexes. A file whose every row is marked gets no DV: it is only removed.
 */
public final class DeletionVectorBitmapGenerator {
  private static final String PATH = "__fc_dv_path";
  private static final String FILE_ID = "__fc_dv_file_id";

  private DeletionVectorBitmapGenerator() {}

  /**
   * The new deletion vector of one touched file.
   *
   * @param path the file's log path
   * @param deletionVector its new DV (earlier marks and new ones), or null when every row of the file
   *     is now marked (the file is only removed)
   * @param newlyMarked rows marked by this command (not counting the earlier DV)
   * @param dvFile name of the DV file under the table root that holds {@code deletionVector}, or null
   * @serial exclude
   */
  public record Outcome(String path, DeletionVectorDescriptor deletionVector, long newlyMarked, String dvFile)
      implements Serializable {}

  /** What a task needs to know about a touched file. */
  private record Target(String path, DeletionVectorDescriptor current, long numRecords) implements Serializable {}

  /** The broadcast state of one generation: the files by id, where to write, the command's token. */
  private record Job(String tablePath, SerializableConfiguration conf, Target[] targets, String token)
      implements Serializable {}

  /**
   * Marks rows deleted in new deletion vectors, one DV file per task under the table root.
   *
   * @param session the session that runs the job
   * @param marks the rows to mark: column 0 the file's log path (string), column 1 the row index in
   *     the file (long, 0-based); each pair at most once, none already marked by the file's DV
   * @param candidates the files {@code marks} may name, each with its current DV (or none) and a
   *     trustworthy {@code numRecords} statistic ({@link AddFile#numPhysicalRecords})
   * @param tableRoot the table root
   * @param conf Hadoop configuration for the file system (sent to the executors)
   * @param token the command's token ({@link DeletionVectorStore#newToken}); every DV file UUID
   *     starts with it
   * @return one outcome per file with marked rows, in no particular order
   * @throws IllegalArgumentException when a candidate has no trustworthy row count
   * @throws RuntimeException (Spark's {@code SparkException} and others) when the job fails; DV
   *     files written so far stay for the caller's {@link DeletionVectorStore#sweep}
   */
  public static List<Outcome> generate(SparkSession session, Dataset<Row> marks, List<AddFile> candidates,
      Path tableRoot, Configuration conf, String token) {
    if (candidates.isEmpty()) {
      return List.of();
    }
    Map<String, Integer> ids = new HashMap<>();
    Target[] targets = new Target[candidates.size()];
    for (int i = 0; i < targets.length; i++) {
      AddFile f = candidates.get(i);
      long n = f.numPhysicalRecords().orElseThrow(() ->
          new IllegalArgumentException("File " + f.path() + " has no numRecords statistic"));
      targets[i] = new Target(f.path(), f.deletionVector(), n);
      ids.put(f.path(), i);
    }
    Broadcast<Job> job = JavaSparkContext.fromSparkContext(session.sparkContext())
        .broadcast(new Job(tableRoot.toString(), new SerializableConfiguration(conf), targets, token));
    try {
      int tasks = Math.max(1, Math.min(session.sessionState().conf().numShufflePartitions(), targets.length));
      // Map side: consecutive rows of a file (a scan task reads its files one after another) become
      // one partial bitmap; only those are shuffled, by file, and sorted so a task meets each file once.
      // File paths become int ids in a broadcast join (generated code), so the map side handles
      // two primitives per row, never a path string.
      List<Row> idRows = new ArrayList<>();
      ids.forEach((path, id) -> idRows.add(RowFactory.create(path, id)));
      Dataset<Row> idTable = session.createDataFrame(idRows, new StructType()
          .add(PATH, DataTypes.StringType, false).add(FILE_ID, DataTypes.IntegerType, false));
      Dataset<Tuple2<Integer, Long>> keyed = marks
          .join(functions.broadcast(idTable), marks.col(marks.columns()[0]).equalTo(idTable.col(PATH)))
          .select(functions.col(FILE_ID), marks.col(marks.columns()[1]).cast(DataTypes.LongType))
          .as(Encoders.tuple(Encoders.INT(), Encoders.LONG()));
      Dataset<Tuple2<Integer, byte[]>> partials = keyed.mapPartitions(new PartialBitmaps(),
          Encoders.tuple(Encoders.INT(), Encoders.BINARY()));
      return partials.repartition(tasks, functions.col("_1")).sortWithinPartitions("_1")
          .mapPartitions(new BuildBitmaps(job), Encoders.javaSerialization(Outcome.class)).collectAsList();
    } finally {
      job.destroy();
    }
  }

  private static byte[] portable(Roaring64NavigableMap bitmap) {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
      bitmap.runOptimize();
      bitmap.serializePortable(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static Roaring64NavigableMap fromPortable(byte[] bytes) {
    Roaring64NavigableMap bitmap = new Roaring64NavigableMap();
    try {
      bitmap.deserializePortable(new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bitmap;
  }

  /**
   * Map side: (file id, row index) rows -> (file id, partial bitmap), one partial per run of
   * consecutive rows of a file; holds one bitmap at a time and emits lazily.
   */
  private static final class PartialBitmaps
      implements MapPartitionsFunction<Tuple2<Integer, Long>, Tuple2<Integer, byte[]>> {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<Tuple2<Integer, byte[]>> call(Iterator<Tuple2<Integer, Long>> rows) {
      return new Iterator<>() {
        private Tuple2<Integer, Long> pending = rows.hasNext() ? rows.next() : null;

        @Override
        public boolean hasNext() {
          return pending != null;
        }

        @Override
        public Tuple2<Integer, byte[]> next() {
          if (pending == null) {
            throw new java.util.NoSuchElementException();
          }
          int file = pending._1();
          Roaring64NavigableMap bitmap = new Roaring64NavigableMap();
          bitmap.addLong(pending._2());
          pending = null;
          while (rows.hasNext()) {
            Tuple2<Integer, Long> r = rows.next();
            if (r._1() != file) {
              pending = r;
              break;
            }
            bitmap.addLong(r._2());
          }
          return new Tuple2<>(file, portable(bitmap));
        }
      };
    }
  }

  /**
   * The {@code add} of a file that keeps its rows but gets a new deletion vector: the same physical
   * file (path, size, partition values, tags) with statistics marked {@code tightBounds=false}, since
   * its min/max values may now be wider than the live rows; {@code numRecords} stays the physical
   * row count (protocol "Per-file Statistics").
   *
   * @param file the active file
   * @param dv its new deletion vector
   * @return the new AddFile ({@code dataChange=true})
   * @throws UncheckedIOException when the file's statistics are not JSON
   */
  public static AddFile withDeletionVector(AddFile file, DeletionVectorDescriptor dv) {
    try {
      JsonNode n = Actions.MAPPER.readTree(file.stats());
      ((ObjectNode) n).put("tightBounds", false);
      return file.withDeletionVector(dv, Actions.MAPPER.writeValueAsString(n));
    } catch (IOException e) {
      throw new UncheckedIOException("Unreadable statistics " + file.stats(), e);
    }
  }

  /** Reduce side: one file's bitmap at a time (its partials ORed), all of the task's DVs into one file. */
  private static final class BuildBitmaps implements MapPartitionsFunction<Tuple2<Integer, byte[]>, Outcome> {
    private static final long serialVersionUID = 1L;
    private final Broadcast<Job> job;

    BuildBitmaps(Broadcast<Job> job) {
      this.job = job;
    }

    @Override
    public Iterator<Outcome> call(Iterator<Tuple2<Integer, byte[]>> partials) throws IOException {
      Job j = job.value();
      Configuration conf = j.conf().value();
      Path root = new Path(j.tablePath());
      FileSystem fs = root.getFileSystem(conf);
      List<Outcome> out = new ArrayList<>();
      DeletionVectorWriter writer = new DeletionVectorWriter(fs, root, j.token());
      TaskContext task = TaskContext.get();
      if (task != null) {
        task.addTaskFailureListener((org.apache.spark.util.TaskFailureListener) (context, error) -> writer.abort());
      }
      Engine[] engine = new Engine[1]; // created on first need: only files with a DV read one
      int current = -1;
      Roaring64NavigableMap bitmap = null;
      try {
        while (partials.hasNext()) {
          Tuple2<Integer, byte[]> p = partials.next();
          int file = p._1();
          if (file != current) {
            if (bitmap != null) {
              out.add(finish(j, j.targets()[current], bitmap, writer, engine, conf));
            }
            current = file;
            bitmap = new Roaring64NavigableMap();
          }
          bitmap.or(fromPortable(p._2()));
        }
        if (bitmap != null) {
          out.add(finish(j, j.targets()[current], bitmap, writer, engine, conf));
        }
        writer.close();
      } catch (IOException | RuntimeException | Error e) {
        writer.abort();
        throw e;
      }
      return out.iterator();
    }

    /** The file's new DV: its new marks and its current DV's, written unless every row is marked. */
    private static Outcome finish(Job j, Target t, Roaring64NavigableMap marked, DeletionVectorWriter writer,
        Engine[] engine, Configuration conf) throws IOException {
      long newlyMarked = marked.getLongCardinality();
      if (t.current() != null) {
        if (engine[0] == null) {
          engine[0] = DefaultEngine.create(conf);
        }
        for (long row : KernelInternals.deletedRowIndexes(engine[0], j.tablePath(), t.current())) {
          marked.addLong(row);
        }
      }
      if (marked.getLongCardinality() >= t.numRecords()) {
        return new Outcome(t.path(), null, newlyMarked, null);
      }
      marked.runOptimize();
      DeletionVectorDescriptor dv = writer.write(marked);
      return new Outcome(t.path(), dv, newlyMarked, writer.currentFile().getName());
    }
  }
}
