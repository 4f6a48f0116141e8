package io.filecommit.files.nativewriter;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * The snappy-compressing engine of {@link NativeParquetWriter}: DuckDB's C++ Parquet writer,
 * reached through DuckDB's JDBC driver ({@code org.duckdb:duckdb_jdbc}, its native library inside
 * the jar) and Arrow's C stream interface ({@code org.apache.arrow:arrow-c-data}): a task's Arrow
 * batches are exported as an {@code ArrowArrayStream}, registered on a DuckDB connection
 * ({@code DuckDBConnection.registerArrowStream}) and written by {@code COPY <stream> TO '<file>'
 * (FORMAT parquet, COMPRESSION snappy)} (DuckDB's documented COPY statement), one file per call.
 *
 * <p>Both jars are loaded by reflection from the server's class path, as the Arrow dataset jar is.
 * One in-memory DuckDB database per JVM runs with {@code threads=1}: each COPY runs on the calling
 * (Spark task) thread only, Spark's tasks being the parallelism; each file gets a connection of
 * its own ({@code DuckDBConnection.duplicate()}).
 */
final class DuckDbParquetFiles {
  private static Connection database;
  private static Method duplicate;
  private static Method register;
  private static Method allocateStream;
  private static Method exportStream;

  private DuckDbParquetFiles() {}

  /**
   * Loads DuckDB's driver and Arrow's C data classes and opens the JVM's database.
   *
   * @throws ReflectiveOperationException when a class or method is missing
   * @throws SQLException when DuckDB's native library does not load or the database does not open
   */
  static synchronized void load() throws ReflectiveOperationException, SQLException {
    if (database != null) {
      return;
    }
    ClassLoader cl = DuckDbParquetFiles.class.getClassLoader();
    Class<?> streamClass = Class.forName("org.apache.arrow.c.ArrowArrayStream", true, cl);
    Method allocate = streamClass.getMethod("allocateNew", BufferAllocator.class);
    Method export = Class.forName("org.apache.arrow.c.Data", true, cl)
        .getMethod("exportArrayStream", BufferAllocator.class, ArrowReader.class, streamClass);
    Class<?> connClass = Class.forName("org.duckdb.DuckDBConnection", true, cl);
    Driver driver = (Driver) Class.forName("org.duckdb.DuckDBDriver", true, cl).getConstructor().newInstance();
    Properties props = new Properties();
    props.setProperty("threads", "1");
    Connection c = driver.connect("jdbc:duckdb:", props);
    try (Statement st = c.createStatement()) {
      st.execute("SET threads = 1");
      st.execute("SET preserve_insertion_order = true");
    }
    duplicate = connClass.getMethod("duplicate");
    register = connClass.getMethod("registerArrowStream", String.class, Object.class);
    allocateStream = allocate;
    exportStream = export;
    database = c;
  }

  /**
   * Writes the reader's batches as one snappy Parquet file.
   *
   * @param allocator the allocator of the exported stream
   * @param reader the batches (consumed and closed by DuckDB through the stream)
   * @param file the local file to create (absolute path; its directory exists)
   * @throws IllegalStateException when DuckDB fails (its message kept)
   */
  static void write(BufferAllocator allocator, ArrowReader reader, String file) {
    try (AutoCloseable stream = (AutoCloseable) allocateStream.invoke(null, allocator)) {
      exportStream.invoke(null, allocator, reader, stream);
      try (Connection c = (Connection) duplicate.invoke(database); Statement st = c.createStatement()) {
        register.invoke(c, "filecommit_batches", stream);
        st.execute("COPY filecommit_batches TO '" + file.replace("'", "''")
            + "' (FORMAT parquet, COMPRESSION snappy)");
      }
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("DuckDB Parquet writer of " + file + " failed: " + e.getCause(), e.getCause());
    } catch (Exception e) {
      throw new IllegalStateException("DuckDB Parquet writer of " + file + " failed: " + e, e);
    }
  }
}
