package io.filecommit.delta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.filecommit.errors.FileCommitException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** The rule of which settings a client may change, without Spark: keys, values, options. */
class ClientSettingsTest {

  @Test
  void hadoopNamespacesAndClassNamesAreTheServers() {
    for (String key : List.of(
        "fs.file.impl", "fs.file.impl.disable.cache", "fs.defaultFS", "fs.default.name",
        "fs.viewfs.mounttable.default.link./tmp", "fs.AbstractFileSystem.file.impl", "fs.s3a.endpoint",
        "hadoop.security.authentication", "io.compression.codecs", "io.file.buffer.size", "dfs.replication",
        "mapreduce.outputcommitter.factory.class", "mapreduce.fileoutputcommitter.algorithm.version",
        "mapred.output.committer.class", "yarn.resourcemanager.address",
        "parquet.write.support.class", "parquet.crypto.factory.class", "parquet.encryption.kms.client.class",
        "parquet.memory.pool.ratio", "parquet.enable.summary-metadata", "parquet.summary.metadata.level",
        "parquet.compression.codec.zstd.workers", "io.delta.kernel.logStore.file.impl",
        "delta.kernel.default.parquet.reader.batch-size", "FS.file.impl", "Parquet.block.size",
        "spark.filecommit.allowedRoots", "spark.filecommit.retention.floor", "spark.delta.logStore.class",
        "spark.delta.logStore.file.impl", "spark.hadoop.fs.file.impl", "spark.hadoop.fs.defaultFS",
        "spark.hadoop.mapreduce.outputcommitter.factory.class", "spark.hadoop.spark.sql.shuffle.partitions",
        "spark.hadoop.io.delta.kernel.logStore.file.impl",
        "spark.sql.sources.commitProtocolClass", "spark.sql.sources.outputCommitterClass",
        "spark.sql.parquet.output.committer.class", "spark.sql.streaming.commitProtocolClass",
        "spark.sql.streaming.checkpointFileManagerClass", "spark.sql.streaming.stateStore.providerClass",
        "spark.sql.catalog.mine", "spark.sql.catalog.spark_catalog",
        "spark.io.delta.storage.S3DynamoDBLogStore.credentials.provider",
        "spark.io.delta.storage.S3DynamoDBLogStore.ddb.tableName")) {
      assertFalse(ClientSettings.mayChange(key), key);
    }
  }

  @Test
  void theNativeWriterChoiceIsTheOnlyServerKeyAClientMaySet() {
    assertTrue(ClientSettings.mayChange("spark.filecommit.writer.native"));
    assertFalse(ClientSettings.mayChange("spark.filecommit.writer.nativeX"));
    assertFalse(ClientSettings.mayChange("spark.filecommit.writer.class"));
  }

  @Test
  void sparkSettingsOptionsAndParquetValuesAreTheClients() {
    for (String key : List.of(
        "spark.sql.session.timeZone", "spark.sql.shuffle.partitions", "spark.sql.parquet.compression.codec",
        "spark.sql.parquet.writeLegacyFormat", "spark.sql.files.maxRecordsPerFile", "spark.sql.ansi.enabled",
        "spark.sql.streaming.fileSink.log.compactInterval",
        "compression", "maxRecordsPerFile", "mergeSchema", "replaceWhere", "timeZone", "retention",
        "parquet.compression", "parquet.block.size", "parquet.page.size", "parquet.enable.dictionary",
        "parquet.enable.dictionary#name", "parquet.bloom.filter.enabled#id", "parquet.writer.version",
        "parquet.compression.codec.zstd.level", "spark.hadoop.parquet.block.size", "spark.filecommit.writer.native")) {
      assertTrue(ClientSettings.mayChange(key), key);
    }
  }

  @Test
  void aServerOwnedKeyPassesOnlyWithTheServersValue() {
    Map<String, String> server = Map.of("fs.defaultFS", "file:///", "spark.filecommit.allowedRoots", "/data");
    Map<String, String> session = new LinkedHashMap<>();
    session.put("spark.filecommit.allowedRoots", "/data");
    session.put("fs.defaultFS", "file:///");
    session.put("spark.sql.shuffle.partitions", "3");
    session.put("parquet.block.size", "1048576");
    assertEquals(List.of(), ClientSettings.refused(session, server::get));
    session.put("fs.file.impl.disable.cache", "true");
    session.put("fs.file.impl", "does.not.Exist");
    session.put("spark.filecommit.allowedRoots", "/");
    assertEquals(List.of("fs.file.impl", "fs.file.impl.disable.cache", "spark.filecommit.allowedRoots"),
        ClientSettings.refused(session, server::get), "sorted, so the error names the same key every time");
  }

  @Test
  void theServersValueOfSparkKeysIsItsSparkConfAndOfOthersItsHadoopConf() {
    SparkConf sparkConf = new SparkConf(false).set("spark.hadoop.fs.defaultFS", "file:///x")
        .set("spark.filecommit.allowedRoots", "/data");
    Configuration hadoop = new Configuration(false);
    hadoop.set("fs.defaultFS", "file:///y");
    var values = ClientSettings.serverValues(sparkConf, hadoop);
    assertEquals("file:///x", values.apply("spark.hadoop.fs.defaultFS"));
    assertEquals("/data", values.apply("spark.filecommit.allowedRoots"));
    assertEquals("file:///y", values.apply("fs.defaultFS"));
    assertNull(values.apply("fs.file.impl"));
    assertNull(values.apply("spark.sql.sources.commitProtocolClass"));
  }

  @Test
  void refusalIsSparksStaticConfigErrorNamingTheFirstKey() {
    FileCommitException e = ClientSettings.refusal(List.of("fs.defaultFS", "fs.file.impl"), "session setting");
    assertEquals("CANNOT_MODIFY_STATIC_CONFIG", e.getCondition());
    assertEquals("46110", e.getSqlState());
    assertEquals("fs.defaultFS", e.getMessageParameters().get("key"));
    assertTrue(e.getMessage().contains("fs.file.impl"), e.getMessage());
  }

  @Test
  void writerOptionsThatNameServerSettingsAreRefusedBeforeAnythingIsSet() {
    Configuration conf = new Configuration(false);
    conf.set("fs.defaultFS", "file:///");
    for (String key : List.of("fs.file.impl", "fs.defaultFS", "mapreduce.outputcommitter.factory.class",
        "spark.sql.parquet.output.committer.class", "spark.hadoop.fs.file.impl")) {
      Configuration own = new Configuration(conf);
      FileCommitException e = assertThrows(FileCommitException.class,
          () -> DeltaLogCache.setOptions(own, Map.of(key, "does.not.Exist", "compression", "gzip")), key);
      assertEquals("CANNOT_MODIFY_STATIC_CONFIG", e.getCondition(), key);
      assertEquals(key, e.getMessageParameters().get("key"));
      assertNull(own.getRaw("compression"), "nothing set");
    }
    Map<String, String> fine = Map.of("compression", "gzip", "parquet.enable.dictionary", "false",
        "fs.defaultFS", "file:///", "path", "/anywhere");
    assertSame(conf, DeltaLogCache.setOptions(conf, fine));
    assertEquals("false", conf.get("parquet.enable.dictionary"));
    assertNull(conf.getRaw("path"), "path is never copied, so never judged");
  }
}
