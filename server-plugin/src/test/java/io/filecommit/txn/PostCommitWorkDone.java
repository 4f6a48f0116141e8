package io.filecommit.txn;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Registered for every JUnit test (junit-platform.properties turns on extension auto-detection):
 * after each test, waits until the background post-commit work of its commits (checksum files,
 * checkpoints) is done, so that work never writes into a temporary directory JUnit is deleting,
 * nor into the next test's.
 */
public final class PostCommitWorkDone implements AfterEachCallback {
  @Override
  public void afterEach(ExtensionContext context) {
    assertTrue(PostCommitHooks.awaitAllIdle(60_000), "post-commit work still running 60 s after the test");
  }
}
