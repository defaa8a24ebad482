// TypeInfo <-> Flink's FlinkFnApi.TypeInfo proto (what goes into the
// CoderInfoDescriptor raw_type of every flink:coder:v1 coder).
package fnworker.harness.types;

import org.apache.flink.fnexecution.v1.FlinkFnApi;

public final class TypeInfoProtos {
  private TypeInfoProtos() {}

  public static FlinkFnApi.TypeInfo toProto(TypeInfo t) {
    FlinkFnApi.TypeInfo.Builder b = FlinkFnApi.TypeInfo.newBuilder()
        .setTypeName(FlinkFnApi.TypeInfo.TypeName.forNumber(t.name.number));
    switch (t.name) {
      case ROW: {
        FlinkFnApi.TypeInfo.RowTypeInfo.Builder r = FlinkFnApi.TypeInfo.RowTypeInfo.newBuilder();
        for (int i = 0; i < t.children.size(); i++) {
          r.addFields(FlinkFnApi.TypeInfo.RowTypeInfo.Field.newBuilder()
              .setFieldName(t.fieldNames.get(i)).setFieldType(toProto(t.children.get(i))));
        }
        b.setRowTypeInfo(r);
        break;
      }
      case TUPLE: {
        FlinkFnApi.TypeInfo.TupleTypeInfo.Builder tt = FlinkFnApi.TypeInfo.TupleTypeInfo.newBuilder();
        for (TypeInfo c : t.children) {
          tt.addFieldTypes(toProto(c));
        }
        b.setTupleTypeInfo(tt);
        break;
      }
      case LIST: case BASIC_ARRAY: case PRIMITIVE_ARRAY: case OBJECT_ARRAY:
        b.setCollectionElementType(toProto(t.element()));
        break;
      case MAP:
        b.setMapTypeInfo(FlinkFnApi.TypeInfo.MapTypeInfo.newBuilder()
            .setKeyType(toProto(t.children.get(0))).setValueType(toProto(t.children.get(1))));
        break;
      case AVRO:
        b.setAvroTypeInfo(FlinkFnApi.TypeInfo.AvroTypeInfo.newBuilder().setSchema(t.avroSchemaJson));
        break;
      default:
        break;
    }
    return b.build();
  }

  public static TypeInfo fromProto(FlinkFnApi.TypeInfo p) {
    TypeName n = TypeName.byNumber(p.getTypeNameValue());
    switch (n) {
      case ROW: {
        java.util.List<String> names = new java.util.ArrayList<>();
        java.util.List<TypeInfo> types = new java.util.ArrayList<>();
        for (FlinkFnApi.TypeInfo.RowTypeInfo.Field f : p.getRowTypeInfo().getFieldsList()) {
          names.add(f.getFieldName());
          types.add(fromProto(f.getFieldType()));
        }
        return TypeInfo.row(names, types);
      }
      case TUPLE: {
        java.util.List<TypeInfo> types = new java.util.ArrayList<>();
        for (FlinkFnApi.TypeInfo f : p.getTupleTypeInfo().getFieldTypesList()) {
          types.add(fromProto(f));
        }
        return TypeInfo.tuple(types.toArray(new TypeInfo[0]));
      }
      case LIST: case BASIC_ARRAY: case PRIMITIVE_ARRAY: case OBJECT_ARRAY:
        return TypeInfo.container(n, fromProto(p.getCollectionElementType()));
      case MAP:
        return TypeInfo.map(fromProto(p.getMapTypeInfo().getKeyType()), fromProto(p.getMapTypeInfo().getValueType()));
      case AVRO:
        return TypeInfo.avro(p.getAvroTypeInfo().getSchema());
      default:
        return TypeInfo.atomic(n);
    }
  }
}
