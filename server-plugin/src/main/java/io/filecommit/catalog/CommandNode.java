package io.filecommit.catalog;

import java.util.List;
import java.util.function.Supplier;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.command.LeafRunnableCommand;

/**
 * A SQL statement the analysis rule resolved to one of the plugin's commands (Delta's {@code
 * DeltaCommand}s are Spark {@code RunnableCommand}s the same way): runs it when Spark executes the
 * plan, once, and returns its result rows ({@link Statements} gives each statement's columns, as
 * Delta names them).
 */
public final class CommandNode extends LogicalPlan implements LeafRunnableCommand {
  private final String statement;
  private final scala.collection.immutable.Seq<Attribute> output;
  private final Supplier<List<Row>> body;

  /**
   * A command node.
   *
   * @param statement what it runs, for plans and logs (e.g. {@code DELETE FROM t})
   * @param output the result columns
   * @param body runs the command and returns its result rows
   */
  public CommandNode(String statement, scala.collection.immutable.Seq<Attribute> output, Supplier<List<Row>> body) {
    this.statement = statement;
    this.output = output;
    this.body = body;
    org.apache.spark.sql.catalyst.plans.logical.Command.$init$(this);
  }

  private scala.collection.immutable.Seq<scala.Enumeration.Value> patterns;

  @Override
  public void org$apache$spark$sql$catalyst$plans$logical$Command$_setter_$nodePatterns_$eq(
      scala.collection.immutable.Seq<scala.Enumeration.Value> value) {
    patterns = value;
  }

  @Override
  public scala.collection.immutable.Seq<scala.Enumeration.Value> nodePatterns() {
    return patterns;
  }

  @Override
  public scala.collection.immutable.Seq<Row> run(org.apache.spark.sql.SparkSession session) {
    return scala.jdk.javaapi.CollectionConverters.asScala(body.get()).toList();
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return output;
  }

  @Override
  public scala.collection.immutable.Seq<LogicalPlan> children() {
    return scala.collection.immutable.Seq$.MODULE$.<LogicalPlan>empty();
  }

  @Override
  public LogicalPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<LogicalPlan> children) {
    return this;
  }

  @Override
  public String simpleString(int maxFields) {
    return "FileCommitCommand " + statement;
  }

  @Override
  public int productArity() {
    return 3;
  }

  @Override
  public Object productElement(int n) {
    return switch (n) {
      case 0 -> statement;
      case 1 -> output;
      case 2 -> body;
      default -> throw new IndexOutOfBoundsException(n);
    };
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof CommandNode;
  }

  @Override
  public boolean equals(Object other) {
    return other == this;
  }

  @Override
  public int hashCode() {
    return System.identityHashCode(this);
  }
}
