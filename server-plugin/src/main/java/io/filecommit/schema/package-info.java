/**
 * Schema rules shared by table writes, sinks and row-level commands: case-insensitive field lookup,
 * Spark SQL quoting and partition-column checks ({@link SchemaUtils}, Delta's {@code SchemaUtils}),
 * schema evolution of a write with {@code mergeSchema} and type widening ({@link SchemaEvolution},
 * Delta's {@code SchemaMergingUtils.mergeSchemas} and {@code TypeWidening}; protocol "Type
 * Widening"), and partition predicates evaluated on files' partition values ({@link
 * PartitionPredicates}, Delta's {@code DeltaLog.filterFileList}; protocol "Partition Value
 * Serialization").
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code delta} and {@code errors}, and {@code
 * deletionvectors} on its own layer (not {@code constraints}, which imports this package).
 */
package io.filecommit.schema;
