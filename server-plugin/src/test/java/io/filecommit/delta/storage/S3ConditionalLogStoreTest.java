package io.filecommit.delta.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.delta.storage.CloseableIterator;
import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URL;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * {@link S3ConditionalLogStore} against a real S3 server: a MinIO ({@code make minio}, started
 * here on 127.0.0.1 with a scratch data directory; skipped when it was not built) reached through
 * Hadoop S3A (the {@code provided} hadoop-aws and AWS SDK jars). Put-if-absent must hold between
 * separate LogStore instances (separate servers) racing for one version.
 */
class S3ConditionalLogStoreTest {
  private static final String KEY = "filecommit";
  private static final String SECRET = "filecommit-secret";
  private static final String BUCKET = "logstore";
  private static Process minio;
  private static File data;
  private static String endpoint;

  @BeforeAll
  static void startMinio() throws Exception {
    File bin = new File("../.tools/bin/minio");
    Assumptions.assumeTrue(bin.canExecute(), "MinIO not built (make minio)");
    data = Files.createTempDirectory("s3log-minio").toFile();
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    int console;
    try (ServerSocket s = new ServerSocket(0)) {
      console = s.getLocalPort();
    }
    endpoint = "http://127.0.0.1:" + port;
    ProcessBuilder pb = new ProcessBuilder(bin.getPath(), "server", "--quiet", "--address", "127.0.0.1:" + port,
        "--console-address", "127.0.0.1:" + console, data.getPath());
    pb.environment().put("MINIO_ROOT_USER", KEY);
    pb.environment().put("MINIO_ROOT_PASSWORD", SECRET);
    pb.environment().put("MINIO_BROWSER", "off");
    pb.environment().put("MINIO_UPDATE", "off");
    pb.redirectErrorStream(true).redirectOutput(new File(data.getParentFile(), data.getName() + ".log"));
    minio = pb.start();
    long deadline = System.currentTimeMillis() + 30_000;
    while (true) {
      try {
        HttpURLConnection c = (HttpURLConnection) new URL(endpoint + "/minio/health/live").openConnection();
        c.setConnectTimeout(500);
        if (c.getResponseCode() == 200) {
          break;
        }
      } catch (IOException e) {
        if (System.currentTimeMillis() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
    try (S3Client s3 = S3Client.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1)
        .forcePathStyle(true).credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(KEY, SECRET)))
        .build()) {
      s3.createBucket(b -> b.bucket(BUCKET));
    }
  }

  @AfterAll
  static void stopMinio() throws Exception {
    if (minio != null) {
      minio.destroyForcibly().waitFor();
    }
    if (data != null) {
      try (var files = Files.walk(data.toPath())) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static Configuration conf(boolean conditionalEnabled) {
    Configuration c = new Configuration();
    c.set("fs.s3a.endpoint", endpoint);
    c.set("fs.s3a.endpoint.region", "us-east-1");
    c.set("fs.s3a.path.style.access", "true");
    c.set("fs.s3a.connection.ssl.enabled", "false");
    c.set("fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
    c.set("fs.s3a.access.key", KEY);
    c.set("fs.s3a.secret.key", SECRET);
    c.set("fs.s3a.attempts.maximum", "2");
    c.set("fs.s3a.retry.limit", "2");
    c.setBoolean("fs.s3a.create.conditional.enabled", conditionalEnabled);
    c.setBoolean("fs.s3a.impl.disable.cache", true);
    return c;
  }

  private static Path log(String table) {
    return new Path("s3a://" + BUCKET + "/" + table + "/_delta_log");
  }

  private static List<String> read(S3ConditionalLogStore store, Path p, Configuration c) throws IOException {
    List<String> lines = new ArrayList<>();
    try (CloseableIterator<String> it = store.read(p, c)) {
      it.forEachRemaining(lines::add);
    }
    return lines;
  }

  @Test
  void secondCreateOfAVersionIsRefusedAndTheFirstStays() throws Exception {
    Configuration c = conf(true);
    S3ConditionalLogStore store = new S3ConditionalLogStore(c);
    Path v0 = new Path(log("refused"), "00000000000000000000.json");
    store.write(v0, List.of("{\"a\":1}").iterator(), false, c);
    FileAlreadyExistsException e = assertThrows(FileAlreadyExistsException.class,
        () -> new S3ConditionalLogStore(c).write(v0, List.of("{\"b\":2}").iterator(), false, c));
    assertTrue(String.valueOf(e.getReason()).contains("412"), e.toString());
    assertEquals(List.of("{\"a\":1}"), read(store, v0, c));
    // The bucket was probed once: the probe object is gone, nothing but the commit is listed.
    FileSystem fs = v0.getFileSystem(c);
    List<String> names = new ArrayList<>();
    for (FileStatus st : fs.listStatus(log("refused"))) {
      names.add(st.getPath().getName());
    }
    assertEquals(List.of("00000000000000000000.json"), names);
    assertFalse(store.usesFallback(v0));
  }

  @Test
  void racingStoresOfSeparateServersGetOneWinnerPerVersion() throws Exception {
    Configuration c = conf(true);
    int writers = 6;
    for (int version = 0; version < 5; version++) {
      Path file = new Path(log("race"), String.format("%020d.json", version));
      CountDownLatch start = new CountDownLatch(1);
      ExecutorService pool = Executors.newFixedThreadPool(writers);
      List<Future<Boolean>> results = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        String line = "{\"writer\":" + w + "}";
        S3ConditionalLogStore store = new S3ConditionalLogStore.Required(conf(true));
        results.add(pool.submit(() -> {
          start.await();
          try {
            store.write(file, List.of(line).iterator(), false, c);
            return true;
          } catch (FileAlreadyExistsException e) {
            return false;
          }
        }));
      }
      start.countDown();
      int won = 0;
      for (Future<Boolean> f : results) {
        won += f.get() ? 1 : 0;
      }
      pool.shutdown();
      assertEquals(1, won, "version " + version);
    }
  }

  @Test
  void overwriteReplacesLastCheckpointWhole() throws Exception {
    Configuration c = conf(true);
    S3ConditionalLogStore store = new S3ConditionalLogStore(c);
    Path last = new Path(log("checkpoint"), "_last_checkpoint");
    store.write(last, List.of("{\"version\":10}").iterator(), true, c);
    store.write(last, List.of("{\"version\":20}").iterator(), true, c);
    assertEquals(List.of("{\"version\":20}"), read(store, last, c));
  }

  @Test
  void aBucketWithoutConditionalWritesFallsBackToTheSingleDriverStore() throws Exception {
    S3ConditionalLogStore.forgetProbes();
    try {
      Configuration off = conf(false);
      S3ConditionalLogStore store = new S3ConditionalLogStore(off);
      Path v0 = new Path(log("fallback"), "00000000000000000000.json");
      store.write(v0, List.of("{\"a\":1}").iterator(), false, off);
      assertTrue(store.usesFallback(v0));
      // S3SingleDriverLogStore's own check in this JVM still refuses the version.
      assertThrows(FileAlreadyExistsException.class, () -> store.write(v0, List.of("{\"b\":2}").iterator(), false, off));
      // The operator's "true" never falls back: without the condition nothing is written.
      Path v1 = new Path(log("fallback"), "00000000000000000001.json");
      IOException e = assertThrows(IOException.class,
          () -> new S3ConditionalLogStore.Required(off).write(v1, List.of("{}").iterator(), false, off));
      assertInstanceOf(S3ConditionalPut.NotConditional.class, e);
      assertFalse(v1.getFileSystem(off).exists(v1));
    } finally {
      S3ConditionalLogStore.forgetProbes();
    }
  }
}
