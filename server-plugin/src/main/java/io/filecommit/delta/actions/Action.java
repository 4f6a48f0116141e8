package io.filecommit.delta.actions;

/**
 * One action of a Delta commit (protocol "Actions"): a line {@code {"<name>": {...}}} of a commit
 * file. Every action type is a record serialized by Jackson ({@link Actions}); {@link #actionName()}
 * is the name that wraps it in the log.
 */
public sealed interface Action permits FileAction, Protocol, Metadata, SetTransaction, CommitInfo, DomainMetadata {
  /** {@return the key of this action's log line, e.g. {@code add}, {@code metaData}, {@code commitInfo}} */
  String actionName();
}
