/**
 * The Delta format itself: a table's {@code _delta_log} ({@link DeltaLog}, Delta's {@code
 * DeltaLog}: commit files published put-if-absent, listing, typed actions read back), the state at
 * one version ({@link Snapshot}, Delta's {@code Snapshot}, read through Delta Kernel) and its
 * bounded process-wide cache, the table-feature gate ({@link TableFeatures}, Delta's {@code
 * TableFeature}), one entry per {@code delta.*} property ({@link TableConfig}, Delta's {@code
 * DeltaConfig} / Kernel's {@code TableConfig}), column mapping ({@link ColumnMapping}),
 * checkpoints and log clean-up, and {@link KernelInternals}, the only user of Kernel's internal
 * packages. Follows protocol "Delta Log Entries", "Action Reconciliation", "Checkpoints", "Table
 * Features", "Column Mapping" and "Metadata Cleanup".
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code errors} and its own sub-packages {@code
 * delta.actions} and {@code delta.storage}; never a package above it.
 */
package io.filecommit.delta;
