/**
 * Who is calling and what each caller may touch on a shared server: the verified principal of a
 * Spark Connect session ({@link io.filecommit.security.Principals}), the privileges a principal
 * holds on a path prefix or a catalog table ({@link io.filecommit.security.Privilege}), and the
 * check every door of the server makes before it reads or writes ({@link
 * io.filecommit.security.Access}). Modelled on Unity Catalog's privileges (MODIFY / SELECT on a
 * table, READ FILES / WRITE FILES on an external location), checked at the time of the operation.
 *
 * <p>Layer: above {@code delta} and {@code errors}, below {@code txn} and {@code read}, so that
 * the transaction (commitInfo's {@code userId} / {@code userName}, staged records) and the readers
 * can use it.
 */
package io.filecommit.security;
