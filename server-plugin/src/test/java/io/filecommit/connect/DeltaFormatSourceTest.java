package io.filecommit.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** Which name {@link DeltaFormatSource} answers to, for each server configuration. */
class DeltaFormatSourceTest {
  @Test
  void answersDeltaByDefaultWithoutDeltaSpark() {
    assertEquals("delta", DeltaFormatSource.name(null, false));
    assertEquals("delta", DeltaFormatSource.name(new SparkConf(false), false));
    assertEquals("delta", DeltaFormatSource.name(new SparkConf(false).set(io.filecommit.conf.FileCommitConf.READ_DELTA_FORMAT.key(), "true"), false));
  }

  @Test
  void settingFalseSwitchesItOff() {
    SparkConf off = new SparkConf(false).set(io.filecommit.conf.FileCommitConf.READ_DELTA_FORMAT.key(), "false");
    assertEquals(DeltaFormatSource.DISABLED_NAME, DeltaFormatSource.name(off, false));
    assertEquals(DeltaFormatSource.DISABLED_NAME, DeltaFormatSource.name(off, true));
  }

  @Test
  void refusedWithDeltaSparkUnlessSwitchedOff() {
    for (SparkConf conf : new SparkConf[] {new SparkConf(false),
        new SparkConf(false).set(io.filecommit.conf.FileCommitConf.READ_DELTA_FORMAT.key(), "true")}) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> DeltaFormatSource.name(conf, true));
      assertTrue(e.getMessage().contains(io.filecommit.conf.FileCommitConf.READ_DELTA_FORMAT.key() + "=false"), e.getMessage());
    }
  }

  @Test
  void refusesAValueThatIsNotABoolean() {
    SparkConf bad = new SparkConf(false).set(io.filecommit.conf.FileCommitConf.READ_DELTA_FORMAT.key(), "yes");
    assertThrows(IllegalStateException.class, () -> DeltaFormatSource.name(bad, false));
  }
}
