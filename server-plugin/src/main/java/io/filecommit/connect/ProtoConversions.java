package io.filecommit.connect;

import io.filecommit.commands.WriteMode;
import io.filecommit.commands.merge.MergeClause;
import io.filecommit.delta.actions.AddCDCFile;
import io.filecommit.delta.actions.AddFile;
import io.filecommit.delta.actions.DeletionVectorDescriptor;
import io.filecommit.delta.actions.RemoveFile;
import io.filecommit.errors.DeltaErrors;
import io.filecommit.proto.v1.FileAction;
import io.filecommit.proto.v1.MergeClause.Kind;
import io.filecommit.proto.v1.PartitionValue;
import io.filecommit.proto.v1.SaveMode;
import io.filecommit.proto.v1.Transaction;
import io.filecommit.txn.TransactionId;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;

/**
 * Conversions between the contract's messages ({@code proto/filecommit/v1}) and the domain: file
 * actions and sink file statuses out, save modes, transactions and MERGE clause kinds in. Field
 * meanings follow protocol "Add File and Remove File", "Add CDC File", "Deletion Vector Descriptor
 * Schema" and Spark's {@code SinkFileStatus}.
 */
final class ProtoConversions {
  private ProtoConversions() {}

  /** The contract's {@code Transaction}, or null when the command has none. */
  static TransactionId txnOf(boolean present, Transaction txn) {
    return present ? new TransactionId(txn.getAppId(), txn.getVersion()) : null;
  }

  /**
   * The save mode of a contract value.
   *
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} for an
   *     unknown value
   */
  static WriteMode toMode(SaveMode mode) {
    return switch (mode) {
      case SAVE_MODE_UNSPECIFIED, SAVE_MODE_APPEND -> WriteMode.APPEND;
      case SAVE_MODE_OVERWRITE -> WriteMode.OVERWRITE;
      case SAVE_MODE_ERROR_IF_EXISTS -> WriteMode.ERROR_IF_EXISTS;
      case SAVE_MODE_IGNORE -> WriteMode.IGNORE;
      default -> throw DeltaErrors.malformed("Unknown save mode: " + mode);
    };
  }

  /**
   * The MERGE clause kind of a contract value.
   *
   * @throws io.filecommit.errors.FileCommitException {@code FILECOMMIT_MALFORMED_COMMAND} for an
   *     unknown value
   */
  static MergeClause.Kind toKind(Kind kind) {
    return switch (kind) {
      case MATCHED_UPDATE -> MergeClause.Kind.MATCHED_UPDATE;
      case MATCHED_DELETE -> MergeClause.Kind.MATCHED_DELETE;
      case NOT_MATCHED_INSERT -> MergeClause.Kind.NOT_MATCHED_INSERT;
      case NOT_MATCHED_BY_SOURCE_UPDATE -> MergeClause.Kind.NOT_MATCHED_BY_SOURCE_UPDATE;
      case NOT_MATCHED_BY_SOURCE_DELETE -> MergeClause.Kind.NOT_MATCHED_BY_SOURCE_DELETE;
      default -> throw DeltaErrors.malformed("Unknown MERGE clause kind: " + kind);
    };
  }

  /**
   * Contract form of a file action.
   *
   * @param action an AddFile, AddCDCFile or RemoveFile
   * @return the message
   * @throws IllegalArgumentException for another object
   */
  static FileAction toProto(Object action) {
    if (action instanceof AddFile a) {
      io.filecommit.proto.v1.AddFile.Builder b = io.filecommit.proto.v1.AddFile.newBuilder()
          .setPath(a.path())
          .setSize(a.size())
          .setModificationTime(a.modificationTime())
          .setDataChange(a.dataChange())
          .putAllTags(a.tags());
      a.partitionValues().forEach((k, v) -> b.addPartitionValues(pv(k, v)));
      if (a.stats() != null) {
        b.setStats(a.stats());
      }
      if (a.deletionVector() != null) {
        b.setDeletionVector(dv(a.deletionVector()));
      }
      return FileAction.newBuilder().setAdd(b).build();
    }
    if (action instanceof AddCDCFile c) {
      io.filecommit.proto.v1.AddCDCFile.Builder b = io.filecommit.proto.v1.AddCDCFile.newBuilder()
          .setPath(c.path())
          .setSize(c.size())
          .putAllTags(c.tags());
      c.partitionValues().forEach((k, v) -> b.addPartitionValues(pv(k, v)));
      return FileAction.newBuilder().setCdc(b).build();
    }
    if (action instanceof RemoveFile r) {
      io.filecommit.proto.v1.RemoveFile.Builder b = io.filecommit.proto.v1.RemoveFile.newBuilder()
          .setPath(r.path())
          .setDeletionTimestamp(r.deletionTimestamp())
          .setDataChange(r.dataChange())
          .setExtendedFileMetadata(r.extendedFileMetadata());
      r.partitionValues().forEach((k, v) -> b.addPartitionValues(pv(k, v)));
      if (r.size() != null) {
        b.setSize(r.size());
      }
      if (r.deletionVector() != null) {
        b.setDeletionVector(dv(r.deletionVector()));
      }
      return FileAction.newBuilder().setRemove(b).build();
    }
    throw new IllegalArgumentException("Unsupported file action for the v1 contract: " + action);
  }

  /** Contract form of a Spark sink log entry. */
  static io.filecommit.proto.v1.SinkFileStatus toProto(SinkFileStatus s) {
    return io.filecommit.proto.v1.SinkFileStatus.newBuilder()
        .setPath(s.path())
        .setSize(s.size())
        .setIsDir(s.isDir())
        .setModificationTime(s.modificationTime())
        .setBlockReplication(s.blockReplication())
        .setBlockSize(s.blockSize())
        .setAction(s.action())
        .build();
  }

  private static io.filecommit.proto.v1.DeletionVectorDescriptor dv(DeletionVectorDescriptor d) {
    io.filecommit.proto.v1.DeletionVectorDescriptor.Builder b = io.filecommit.proto.v1.DeletionVectorDescriptor.newBuilder()
        .setStorageType(d.storageType())
        .setPathOrInlineDv(d.pathOrInlineDv())
        .setSizeInBytes(d.sizeInBytes())
        .setCardinality(d.cardinality());
    if (d.offset() != null) {
      b.setOffset(d.offset());
    }
    return b.build();
  }

  private static PartitionValue pv(String column, String value) {
    PartitionValue.Builder b = PartitionValue.newBuilder().setColumn(column);
    if (value != null) {
      b.setValue(value);
    }
    return b.build();
  }
}
