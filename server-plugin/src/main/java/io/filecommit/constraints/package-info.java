/**
 * A table's write-time rules (protocol "Column Invariants", "CHECK Constraints", "Generated
 * Columns"): finding them in the schema and configuration ({@code ConstraintRules}, Delta's {@code
 * Constraints.getAll}), enforcing them on every written row inside the write job ({@link
 * Constraints}, with Delta's rules and error classes), carrying a violating row back
 * from the job as a typed error ({@link ViolationPayload}), and checking a constraint a user
 * declares ({@link ConstraintValidation}, Delta's checks of {@code ALTER TABLE ... ADD
 * CONSTRAINT}).
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code schema} (same layer), {@code delta} and {@code
 * errors}; never a package above it.
 */
package io.filecommit.constraints;
