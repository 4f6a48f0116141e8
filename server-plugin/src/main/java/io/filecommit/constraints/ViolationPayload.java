package io.filecommit.constraints;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.filecommit.delta.actions.Actions;
import io.filecommit.errors.ErrorClass;
import io.filecommit.errors.FileCommitException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.functions;

/**
 * The payload a violating row raises inside the write job, and its translation back into the typed
 * violation once the job has failed: the rule and the row's values travel as JSON between two
 * markers made of control characters, through Spark's {@code raise_error} (condition {@code
 * USER_RAISED_EXCEPTION}).
 */
public final class ViolationPayload {
  private ViolationPayload() {}

  /**
   * Starts the payload of a raised violation. Holds control characters that JSON always escapes,
   * so neither the marker nor {@link #PAYLOAD_END} can occur inside the JSON parts of the payload.
   */
  static final String PAYLOAD_START = "\u001eFILECOMMIT_CONSTRAINT\u001f";
  /** Separates the payload's rule JSON from its row-values JSON. */
  static final String PAYLOAD_SEP = "\u001f";
  /** Ends the payload. */
  static final String PAYLOAD_END = "\u001e";
  static final String USER_RAISED = "USER_RAISED_EXCEPTION";

  /**
   * What {@code raise_error} raises for a rule: {@code PAYLOAD_START <rule json> PAYLOAD_SEP <row
   * values json> PAYLOAD_END}. The rule JSON is a constant; the values JSON is computed only for a
   * violating row (the CASE branch), with nulls kept.
   */
  static Column payload(ConstraintRules.Rule r) {
    ObjectNode rule = Actions.MAPPER.createObjectNode();
    rule.put("class", r.cls().name());
    rule.put("name", r.name());
    rule.put("expression", r.expression());
    String head;
    try {
      head = Actions.MAPPER.writeValueAsString(rule);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    Column values;
    if (r.shown().isEmpty()) {
      values = functions.lit("{}");
    } else {
      List<Column> named = new ArrayList<>();
      for (ConstraintRules.Shown s : r.shown()) {
        named.add(s.value().cast("string").as(s.name()));
      }
      values = functions.to_json(functions.struct(named.toArray(new Column[0])), Map.of("ignoreNullFields", "false"));
    }
    return functions.concat(functions.lit(PAYLOAD_START + head + PAYLOAD_SEP), values, functions.lit(PAYLOAD_END));
  }

  /**
   * The typed violation behind a failed write job, or null when the failure is not one of ours.
   *
   * <p>Recognition: {@link Constraints#apply} raises each violation with Spark's {@code raise_error}, whose
   * message is a payload between two markers made of control characters ({@code \u001e}, {@code
   * \u001f}) that JSON always escapes, so they cannot come from data. Spark 4 throws it as a {@code
   * SparkRuntimeException} of condition {@code USER_RAISED_EXCEPTION} with the payload in message
   * parameter {@code errorMessage}; the write job wraps it (task failure, job abort). This walks the
   * cause chain of {@code failure} (cycle safe) and takes the payload from that parameter, or, for a
   * wrapper that kept only the text, from the throwable's message.
   *
   * @param failure what the write job threw (any Throwable; null gives null)
   * @return {@code DELTA_NOT_NULL_CONSTRAINT_VIOLATED} (parameter {@code columnName}) or {@code
   *     DELTA_VIOLATE_CONSTRAINT_WITH_VALUES} (parameters {@code constraintName}, {@code expression}
   *     and {@code values}: one {@code " - <column> : <value>"} line per referenced column, sorted by
   *     column, as Delta), without a cause; or null
   */
  public static FileCommitException translate(Throwable failure) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof FileCommitException fc && isViolation(fc)) {
        return fc;
      }
      FileCommitException typed = null;
      if (t instanceof SparkThrowable st && USER_RAISED.equals(st.getCondition())) {
        typed = decode(st.getMessageParameters().get("errorMessage"));
      }
      if (typed == null) {
        typed = decode(t.getMessage());
      }
      if (typed != null) {
        return typed;
      }
    }
    return null;
  }

  static boolean isViolation(FileCommitException e) {
    return e.getCondition().equals(ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED.name())
        || e.getCondition().equals(ErrorClass.DELTA_VIOLATE_CONSTRAINT_WITH_VALUES.name());
  }

  static FileCommitException decode(String text) {
    if (text == null) {
      return null;
    }
    int start = text.indexOf(PAYLOAD_START);
    if (start < 0) {
      return null;
    }
    int head = start + PAYLOAD_START.length();
    int sep = text.indexOf(PAYLOAD_SEP, head);
    int end = sep < 0 ? -1 : text.indexOf(PAYLOAD_END, sep + 1);
    if (end < 0) {
      return null;
    }
    try {
      JsonNode rule = Actions.MAPPER.readTree(text.substring(head, sep));
      JsonNode row = Actions.MAPPER.readTree(text.substring(sep + 1, end));
      ErrorClass cls = ErrorClass.valueOf(rule.path("class").asText());
      String name = rule.path("name").asText();
      String expression = rule.path("expression").asText();
      if (cls == ErrorClass.DELTA_NOT_NULL_CONSTRAINT_VIOLATED) {
        return cls.error("Column " + name + " is NOT NULL, but a written row has no value for it (a nested field "
            + "is also null when its parent struct is).", Map.of("columnName", name));
      }
      Map<String, String> sorted = new TreeMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = row.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        sorted.put(e.getKey(), e.getValue().isNull() ? "null" : e.getValue().asText());
      }
      StringBuilder values = new StringBuilder();
      sorted.forEach((k, v) -> {
        if (values.length() > 0) {
          values.append('\n');
        }
        values.append(" - ").append(k).append(" : ").append(v);
      });
      Map<String, String> params = new LinkedHashMap<>();
      params.put("constraintName", name);
      params.put("expression", expression);
      params.put("values", values.toString());
      return cls.error("A written row breaks CHECK constraint " + name + " " + expression
          + " (false or null for it). The row's values:\n" + values, params);
    } catch (IOException | IllegalArgumentException e) {
      return null;
    }
  }
}
