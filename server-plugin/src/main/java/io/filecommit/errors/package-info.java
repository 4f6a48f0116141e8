/**
 * The errors the server raises for users, at the bottom of the layers: {@link ErrorClass} is the
 * one catalogue of error classes with their SQLSTATEs (Delta Lake's names where Delta has a class
 * for the condition, from Delta's {@code delta-error-classes.json}; Spark's from its {@code
 * error-conditions.json}; {@code FILECOMMIT_*} otherwise), {@link FileCommitException} is the
 * {@code SparkThrowable} that carries one to the client through Spark Connect, and {@link
 * DeltaErrors} holds the factories of refusals that several commands raise (as Delta's {@code
 * DeltaErrors}).
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): imports no other filecommit package; every other package may import
 * it.
 */
package io.filecommit.errors;
