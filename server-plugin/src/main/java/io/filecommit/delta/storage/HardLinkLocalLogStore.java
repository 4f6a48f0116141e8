package io.filecommit.delta.storage;

import io.delta.storage.HadoopFileSystemLogStore;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * LogStore for the local file system whose put-if-absent holds across processes: the content is
 * written to a hidden temporary file in the same directory and published with a hard link, which
 * fails atomically when the target exists (POSIX {@code link(2)}). Where hard links are not
 * available, an exclusive create ({@code O_CREAT|O_EXCL}) of the target is used. Overwrites
 * ({@code _last_checkpoint}) are atomic renames. The content is forced to the device before it is
 * published, and the directory after, so a published commit is never empty after a power loss. Reading and listing are delta-storage's {@link
 * HadoopFileSystemLogStore}. Partial writes are never visible under the target name.
 *
 * <p>Chosen by {@link LogStores} for the {@code file} scheme; see there why it differs from
 * Delta's {@code LocalLogStore}.
 */
public class HardLinkLocalLogStore extends HadoopFileSystemLogStore {
  /**
   * @param hadoopConf Hadoop configuration (unused beyond delta-storage's base class)
   */
  public HardLinkLocalLogStore(Configuration hadoopConf) {
    super(hadoopConf);
  }

  /**
   * Writes {@code actions}, one per line, to {@code path}.
   *
   * @throws FileAlreadyExistsException when {@code overwrite} is false and the file exists
   * @throws FileNotFoundException when the parent directory is missing
   */
  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
      throws IOException {
    java.nio.file.Path target = new java.io.File(path.toUri()).toPath();
    java.nio.file.Path dir = target.getParent();
    if (dir == null || !Files.isDirectory(dir)) {
      throw new FileNotFoundException("No such directory: " + dir);
    }
    java.nio.file.Path tmp = dir.resolve("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
    try {
      // Streamed line by line into the temporary file: a commit of many files is never held whole.
      writeSynced(tmp, actions);
      if (Boolean.TRUE.equals(overwrite)) {
        Files.move(tmp, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
            java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      } else {
        publishAbsent(target, tmp);
      }
      syncDirectory(dir);
    } finally {
      // On any Throwable, Errors and interrupts included: no temporary file stays in the log.
      Files.deleteIfExists(tmp);
    }
  }

  /**
   * Publishes {@code tmp} as {@code target} only if {@code target} is absent. A link refused for
   * any reason other than an existing target (no hard links on this file system, {@code EPERM},
   * {@code EXDEV}, access denied: {@link UnsupportedOperationException} or a {@link
   * java.nio.file.FileSystemException}) is decided by what the directory then holds: a target with
   * exactly our bytes (those of the temporary file) is ours (the link landed after all, nothing is written twice); another target
   * is a lost race ({@link FileAlreadyExistsException}); no target falls back to an exclusive
   * create ({@code O_CREAT|O_EXCL}) of the target with the bytes, removed again if it cannot be
   * written whole.
   */
  private void publishAbsent(java.nio.file.Path target, java.nio.file.Path tmp) throws IOException {
    try {
      link(target, tmp);
      return;
    } catch (FileAlreadyExistsException | java.nio.file.NoSuchFileException e) {
      throw e;
    } catch (UnsupportedOperationException | java.nio.file.FileSystemException e) {
      if (Files.exists(target, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        if (Files.mismatch(target, tmp) == -1L) {
          return;
        }
        throw new FileAlreadyExistsException(target.toString(), null, "the version exists (link refused: " + e + ")");
      }
    }
    boolean created = false;
    try {
      try (java.io.FileOutputStream out = openExclusive(target)) {
        created = true;
        Files.copy(tmp, out);
        out.getFD().sync();
      }
    } catch (Throwable t) {
      if (created) {
        Files.deleteIfExists(target);
      }
      throw t;
    }
  }

  /**
   * Creates the hard link {@code target} -> {@code existing} ({@link Files#createLink}); a seam for
   * tests of file systems that refuse links.
   *
   * @param target the link to create (the commit file)
   * @param existing the file it links to (the written temporary file)
   * @throws FileAlreadyExistsException when {@code target} exists
   * @throws IOException (a {@link java.nio.file.FileSystemException}) when the link is refused
   */
  protected void link(java.nio.file.Path target, java.nio.file.Path existing) throws IOException {
    Files.createLink(target, existing);
  }

  /** Opens a new file exclusively ({@code O_CREAT|O_EXCL}) for a stream that no interrupt closes. */
  private static java.io.FileOutputStream openExclusive(java.nio.file.Path file) throws IOException {
    Files.newByteChannel(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
    return new java.io.FileOutputStream(file.toFile());
  }

  /**
   * Writes a new file and forces its content to the device before it can be published. Plain
   * streams, not {@link FileChannel}s: a thread interrupted meanwhile (a cancelled command) does
   * not fail the write.
   */
  private static void writeSynced(java.nio.file.Path file, Iterator<String> lines) throws IOException {
    try (java.io.FileOutputStream out = openExclusive(file)) {
      java.io.Writer w = new java.io.BufferedWriter(new java.io.OutputStreamWriter(out, StandardCharsets.UTF_8), 1 << 16);
      while (lines.hasNext()) {
        w.write(lines.next());
        w.write('\n');
      }
      w.flush();
      out.getFD().sync();
    }
  }

  /**
   * Forces a directory's entries to the device (POSIX {@code fsync} of the directory), so a
   * published commit survives a power loss. Where directories cannot be opened for syncing
   * (some platforms), the commit stays published, only less durable.
   */
  private static void syncDirectory(java.nio.file.Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      // not supported here: the file itself was synced
    }
  }

  /**
   * True, as Delta's {@code LocalLogStore}: on the local file system a file written through the
   * file system (not {@link #write}) is visible while it is being written, so writers that ask —
   * Delta Kernel's checkpoint writer ({@code writeParquetFileAtomically}) — write to a temporary
   * name and rename. Commits written by {@link #write} appear whole or not at all either way.
   */
  @Override
  public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) {
    return true;
  }
}
