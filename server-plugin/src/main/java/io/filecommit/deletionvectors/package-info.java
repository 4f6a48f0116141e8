/**
 * Deletion vectors on the executors (protocol "Deletion Vectors", "Deletion Vector Format",
 * "Deletion Vector File Storage Format"): the bitmaps of a DELETE or UPDATE built per file ({@link
 * DeletionVectorBitmapGenerator}, Delta's class of that name), one DV file per task ({@link
 * DeletionVectorWriter}, Delta's {@code DeletionVectorWriter}), the serialized form and the names
 * of a command's DV files ({@link DeletionVectorStore}, Delta's {@code DeletionVectorStore}), and
 * the row-index filter that applies DVs in a scan ({@link RowIndexFilter}, Delta's {@code
 * RowIndexFilter}: {@code DropMarkedRowsFilter} / {@code KeepMarkedRowsFilter}).
 *
 * <p>Layering (package order {@code connect} -> {@code commands} / {@code sink} -> {@code files} ->
 * {@code txn} / {@code read} -> {@code constraints} / {@code schema} / {@code deletionvectors} ->
 * {@code delta} -> {@code errors}, checked by the build; a package imports lower layers and,
 * without a cycle, its own): may import {@code delta} and {@code errors}; never a package above it.
 */
package io.filecommit.deletionvectors;
