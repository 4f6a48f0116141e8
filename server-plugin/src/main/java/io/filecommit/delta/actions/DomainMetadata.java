package io.filecommit.delta.actions;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * Delta {@code domainMetadata} action (protocol "Domain Metadata"; Delta's {@code DomainMetadata}).
 * filecommit writes the row tracking domain ({@code delta.rowTracking}) and parses the others in
 * winning commits so that they read typed.
 *
 * @param domain the domain name
 * @param configuration the domain's configuration string
 * @param removed whether the domain was removed
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonPropertyOrder({"domain", "configuration", "removed"})
public record DomainMetadata(String domain, String configuration, boolean removed) implements Action {
  @Override
  public String actionName() {
    return "domainMetadata";
  }
}
