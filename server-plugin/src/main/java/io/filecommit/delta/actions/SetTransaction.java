package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * Delta {@code txn} action (protocol "Transaction Identifiers"; Delta's {@code SetTransaction}):
 * the latest version of an application's idempotent writes.
 *
 * @param appId application id
 * @param version the application's version
 * @param lastUpdated ms since the Unix epoch, or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"appId", "version", "lastUpdated"})
public record SetTransaction(String appId, long version, Long lastUpdated) implements Action {
  @Override
  public String actionName() {
    return "txn";
  }
}
