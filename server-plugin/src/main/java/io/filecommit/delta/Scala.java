package io.filecommit.delta;

import java.util.List;
import java.util.Map;
import scala.jdk.javaapi.CollectionConverters;

/** Java -> Scala 2.13 immutable collection conversions for calls into Spark. */
final class Scala {
  private Scala() {}

  /** An immutable Scala map with the entries of {@code m}. */
  static <K, V> scala.collection.immutable.Map<K, V> map(Map<K, V> m) {
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(m));
  }

  /** An immutable Scala seq with the elements of {@code l}. */
  static <T> scala.collection.immutable.Seq<T> seq(List<T> l) {
    return CollectionConverters.asScala(l).toSeq();
  }
}
