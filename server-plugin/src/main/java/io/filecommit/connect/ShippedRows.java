package io.filecommit.connect;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.connect.proto.LocalRelation;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan$;
import org.apache.spark.sql.catalyst.types.DataTypeUtils$;
import org.apache.spark.sql.execution.arrow.ArrowConverters$;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.UserDefinedType;
import org.apache.spark.sql.types.VariantType;
import scala.Tuple2;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The plan of a command input whose rows travel in the plan: a Spark Connect {@code LocalRelation}
 * with Arrow data and a JSON schema (what pyspark's {@code createDataFrame} sends) that is exactly
 * the Arrow data's own schema (same names, types, nullability, no metadata) over flat columns.
 *
 * <p>For such an input Spark's {@code SparkConnectPlanner.transformLocalRelation} decodes the
 * Arrow stream ({@code ArrowConverters.fromBatchWithSchemaIterator}) and then casts the rows to
 * the declared schema through three analyzed Datasets ({@code toDF(names).to(schema)}), which is
 * the identity when the two schemas are equal. Here the same decoded, copied rows become the same
 * {@code LocalRelation(toAttributes(schema), rows)} without those analyses (about a fifth of a
 * small write's server CPU). Anything else (no data, a DDL schema, nested, user-defined or variant
 * columns, schemas that differ, undecodable data) is left to the planner, so its rules and errors
 * stay Spark's.
 */
final class ShippedRows {
  private ShippedRows() {}

  /**
   * The {@code LocalRelation} of {@code input}, or empty when the planner must transform it.
   *
   * @param input a command's input relation
   * @return the plan of the shipped rows, or empty
   */
  static Optional<LogicalPlan> plan(Relation input) {
    if (input.getRelTypeCase() != Relation.RelTypeCase.LOCAL_RELATION) {
      return Optional.empty();
    }
    LocalRelation rel = input.getLocalRelation();
    if (!rel.hasData() || !rel.hasSchema() || !rel.getSchema().startsWith("{")) {
      return Optional.empty();
    }
    StructType schema;
    try {
      if (!(DataType.fromJson(rel.getSchema()) instanceof StructType s)) {
        return Optional.empty();
      }
      schema = s;
    } catch (RuntimeException e) {
      return Optional.empty();
    }
    for (StructField f : schema.fields()) {
      DataType t = f.dataType();
      if (t instanceof StructType || t instanceof ArrayType || t instanceof MapType || t instanceof UserDefinedType<?>
          || t instanceof VariantType || !f.metadata().equals(Metadata.empty())) {
        return Optional.empty();
      }
    }
    try {
      Tuple2<Iterator<InternalRow>, StructType> decoded = ArrowConverters$.MODULE$.fromBatchWithSchemaIterator(
          scala.collection.Iterator$.MODULE$.single(rel.getData().toByteArray()), null);
      if (!schema.equals(decoded._2())) {
        return Optional.empty();
      }
      @SuppressWarnings({"unchecked", "rawtypes"})
      Seq<Attribute> attributes = (Seq) DataTypeUtils$.MODULE$.toAttributes(schema);
      @SuppressWarnings({"unchecked", "rawtypes"})
      UnsafeProjection copy = UnsafeProjection$.MODULE$.create((Seq<Expression>) (Seq) attributes, attributes);
      List<InternalRow> rows = new ArrayList<>();
      Iterator<InternalRow> it = decoded._1();
      while (it.hasNext()) {
        rows.add(copy.apply(it.next()).copy());
      }
      LogicalPlan plan = new org.apache.spark.sql.catalyst.plans.logical.LocalRelation(attributes,
          CollectionConverters.asScala(rows).toList(), false, scala.Option.empty());
      if (input.hasCommon() && input.getCommon().hasPlanId()) {
        // as the planner tags every relation: a column reference like df["id"] resolves by it
        plan.setTagValue(LogicalPlan$.MODULE$.PLAN_ID_TAG(), (Object) input.getCommon().getPlanId());
      }
      return Optional.of(plan);
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }
}
