package io.filecommit.delta.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;

/**
 * Hadoop's local file system ({@code file:}) with one difference: without Hadoop's native library
 * ({@code NativeIO}), {@code RawLocalFileSystem.setPermission} forks a {@code chmod} process for
 * every file it creates (twice per Parquet file: the file and its {@code .crc}), which costs
 * several milliseconds each and dominates a one-row append. This file system sets the same
 * permission bits through {@code java.nio.file.Files.setPosixFilePermissions} instead; everything
 * else (checksums, rename, listing) is Hadoop's {@code LocalFileSystem} unchanged. With the native
 * library present, or a permission that has bits NIO cannot express (sticky), Hadoop's own code runs.
 *
 * <p>Used through private Hadoop configurations ({@link #use}): the driver-side small-write path's
 * job configuration and Delta Kernel's engine of a table's log; the server's shared {@code file:}
 * file system stays Hadoop's.
 */
public final class LocalPermissions extends LocalFileSystem {
  /** A {@code LocalFileSystem} over {@link Raw}; Hadoop instantiates it by class name. */
  public LocalPermissions() {
    super(new Raw());
  }

  /**
   * Makes {@code conf} create this file system for {@code file:} paths, when {@code fs} (the file
   * system the paths resolve to) is the local one and no {@code fs.file.impl} is configured: a file
   * system class the server's operator chose is never replaced. The configuration must be private to its
   * user: {@code fs.file.impl.disable.cache} keeps these instances out of Hadoop's process-wide
   * file system cache.
   *
   * @param conf a private Hadoop configuration (changed in place)
   * @param fs the file system of the paths that {@code conf} will be used for
   */
  public static void use(Configuration conf, FileSystem fs) {
    if ("file".equals(fs.getUri().getScheme()) && conf.get("fs.file.impl") == null) {
      conf.set("fs.file.impl", LocalPermissions.class.getName());
      conf.setBoolean("fs.file.impl.disable.cache", true);
    }
  }

  /** {@code RawLocalFileSystem} whose {@code setPermission} runs in-process (see the class comment). */
  static final class Raw extends RawLocalFileSystem {
    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      if (NativeIO.isAvailable() || permission.getStickyBit()) {
        super.setPermission(p, permission);
        return;
      }
      try {
        Files.setPosixFilePermissions(pathToFile(p).toPath(), posix(permission));
      } catch (UnsupportedOperationException e) {
        super.setPermission(p, permission); // not a POSIX file system: Hadoop's own way
      }
    }

    /** The POSIX permission set of Hadoop's user / group / other actions. */
    static Set<PosixFilePermission> posix(FsPermission permission) {
      Set<PosixFilePermission> out = EnumSet.noneOf(PosixFilePermission.class);
      add(out, permission.getUserAction(), PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
          PosixFilePermission.OWNER_EXECUTE);
      add(out, permission.getGroupAction(), PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.GROUP_EXECUTE);
      add(out, permission.getOtherAction(), PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE,
          PosixFilePermission.OTHERS_EXECUTE);
      return out;
    }

    private static void add(Set<PosixFilePermission> out, FsAction action, PosixFilePermission r,
        PosixFilePermission w, PosixFilePermission x) {
      if (action.implies(FsAction.READ)) {
        out.add(r);
      }
      if (action.implies(FsAction.WRITE)) {
        out.add(w);
      }
      if (action.implies(FsAction.EXECUTE)) {
        out.add(x);
      }
    }
  }
}
