/**
 * Delta tables by name and SQL on them: the {@code spark_catalog} plugin ({@link
 * io.filecommit.catalog.FileCommitCatalog}, as Delta's {@code DeltaCatalog} extends Spark's {@code
 * DelegatingCatalogExtension}), the table it loads ({@link io.filecommit.catalog.FileCommitTable},
 * as Delta's {@code DeltaTableV2}) and the session extension ({@link
 * io.filecommit.catalog.FileCommitExtensions}, as Delta's {@code DeltaSparkSessionExtension}) whose
 * analysis rule reads these tables through the filecommit reader and turns SQL's row-level
 * statements into the plugin's own commands (as Delta's {@code DeltaAnalysis}).
 *
 * <p>Layer: the top, with {@code connect}; it may use every lower package ({@code commands},
 * {@code read}, ...) and {@code connect}'s allowed roots. Every commit goes through the same
 * commands as the contract's, so invariants, group commit and error classes are the same.
 */
package io.filecommit.catalog;
