package io.filecommit.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

class DeltaFormatAliasTest {
  @Test
  void answersToDeltaOnlyWhenTheSettingIsOnAndDeltaSparkAbsent() {
    assertEquals(DeltaFormatAlias.DISABLED_NAME, DeltaFormatAlias.name(null, false));
    assertEquals(DeltaFormatAlias.DISABLED_NAME, DeltaFormatAlias.name(new SparkConf(false), true));
    SparkConf on = new SparkConf(false).set(DeltaFormatAlias.SETTING, "true");
    assertEquals("delta", DeltaFormatAlias.name(on, false));
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> DeltaFormatAlias.name(on, true));
    assertTrue(e.getMessage().contains(DeltaFormatAlias.SETTING));
  }
}
