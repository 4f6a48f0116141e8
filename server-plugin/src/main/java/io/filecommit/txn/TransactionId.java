package io.filecommit.txn;

/**
 * An idempotent write's application transaction (protocol "Transaction Identifiers"; Delta's
 * writer options {@code txnAppId} / {@code txnVersion}).
 *
 * @param appId application id, non-empty
 * @param version the application's version, >= 0
 */
public record TransactionId(String appId, long version) {}
