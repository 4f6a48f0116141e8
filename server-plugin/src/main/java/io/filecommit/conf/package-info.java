/**
 * The server's settings: {@link io.filecommit.conf.FileCommitConf} declares every {@code
 * spark.filecommit.*} key once, with its type, default and scope (as Delta's {@code DeltaSQLConf}).
 *
 * <p>Layer: the bottom, beside {@code errors}: every package may read its settings here.
 */
package io.filecommit.conf;
