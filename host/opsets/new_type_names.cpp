#include "opsets/new_type_names.h"

#include <onnx/defs/data_type_utils.h>

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ephost/ephost_types.h"

// onnx 1.12 keeps its type-string tables in onnx::Utils::TypesWrapper, a class its library exports but
// whose declaration lives in data_type_utils.cc only. These are the declarations of the four exported
// members used here (a singleton accessor and three accessors of its tables, all non-virtual): calling
// them needs their names and signatures only, never the class's layout.
namespace onnx::Utils {
class TypesWrapper final {
 public:
  static TypesWrapper& GetTypesWrapper();
  std::unordered_set<std::string>& GetAllowedDataTypes();
  std::unordered_map<std::string, int>& TypeStrToTensorDataType();
  std::unordered_map<int, std::string>& TensorDataTypeToTypeStr();
  TypesWrapper(const TypesWrapper&) = delete;
  TypesWrapper& operator=(const TypesWrapper&) = delete;

 private:
  TypesWrapper();
};
}  // namespace onnx::Utils

namespace ephost::opsets {

namespace {

struct NewType {
  int opset;
  int32_t elem_type;
};
constexpr NewType kNewTypes[] = {
    {19, EPHOST_ELEMENT_FLOAT8E4M3FN}, {19, EPHOST_ELEMENT_FLOAT8E4M3FNUZ}, {19, EPHOST_ELEMENT_FLOAT8E5M2},
    {19, EPHOST_ELEMENT_FLOAT8E5M2FNUZ}, {21, EPHOST_ELEMENT_UINT4},         {21, EPHOST_ELEMENT_INT4},
    {23, EPHOST_ELEMENT_FLOAT4E2M1},   {24, EPHOST_ELEMENT_FLOAT8E8M0},     {25, EPHOST_ELEMENT_UINT2},
    {25, EPHOST_ELEMENT_INT2},
};

}  // namespace

void register_new_type_names() {
  auto& tables = onnx::Utils::TypesWrapper::GetTypesWrapper();
  auto& allowed = tables.GetAllowedDataTypes();
  auto& to_number = tables.TypeStrToTensorDataType();
  auto& to_name = tables.TensorDataTypeToTypeStr();
  for (const NewType& t : kNewTypes) {
    const std::string name = EphostElementTypeName(t.elem_type);
    allowed.insert(name);
    to_number[name] = t.elem_type;
    to_name[t.elem_type] = name;
  }
  // What onnx's own parser now answers: a table onnx stopped reading would make schemas fail later,
  // with a message far from the cause.
  for (const NewType& t : kNewTypes)
    if (onnx::Utils::DataTypeUtils::ToDataTypeString(t.elem_type) != EphostElementTypeName(t.elem_type))
      throw std::runtime_error("onnx's type tables did not take the name of element type " +
                               std::to_string(t.elem_type));
}

std::vector<std::string> new_types_of_opset(int opset) {
  std::vector<std::string> out;
  for (const NewType& t : kNewTypes)
    if (t.opset == opset) out.push_back(std::string("tensor(") + EphostElementTypeName(t.elem_type) + ")");
  return out;
}

std::vector<std::string> new_types_through(int opset) {
  std::vector<std::string> out;
  for (int o = 19; o <= opset; ++o)
    for (std::string& t : new_types_of_opset(o)) out.push_back(std::move(t));
  return out;
}

}  // namespace ephost::opsets
