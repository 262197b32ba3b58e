// frontend/tensor_file.h: serialized onnx.TensorProto files, as ONNX's backend tests store them.
#include "frontend/tensor_file.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/temp_dir.h"

namespace kiln {
namespace {

using frontend::DType;
using frontend::read_tensor_proto_file;
using frontend::Tensor;
using testing::TempDir;

template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string raw(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  return raw;
}

onnx::TensorProto proto(const std::string& name, int32_t dtype, const std::vector<int64_t>& dims) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(dtype);
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

TEST(TensorFile, ReadsFloatsFromRawData) {
  TempDir dir;
  onnx::TensorProto p = proto("x", onnx::TensorProto::FLOAT, {2, 3});
  const std::vector<float> values = {1.5f, -2, 0, 3.25f, 1e-30f, -7};
  p.set_raw_data(raw_bytes(values));
  Result<Tensor> t = read_tensor_proto_file(dir.write("x.pb", p.SerializeAsString()));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->name, "x");
  EXPECT_EQ(t->dtype, DType::kFloat32);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->f32, values);
}

TEST(TensorFile, ReadsFloatsFromTheTypedField) {
  TempDir dir;
  onnx::TensorProto p = proto("y", onnx::TensorProto::FLOAT, {3});
  for (float v : {4.0f, 5.5f, -6.0f}) p.add_float_data(v);
  Result<Tensor> t = read_tensor_proto_file(dir.write("y.pb", p.SerializeAsString()));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->f32, (std::vector<float>{4.0f, 5.5f, -6.0f}));
}

TEST(TensorFile, ReadsInt64FromBothFields) {
  TempDir dir;
  onnx::TensorProto raw = proto("i", onnx::TensorProto::INT64, {2});
  raw.set_raw_data(raw_bytes(std::vector<int64_t>{-1, int64_t{1} << 40}));
  Result<Tensor> a = read_tensor_proto_file(dir.write("a.pb", raw.SerializeAsString()));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->dtype, DType::kInt64);
  EXPECT_EQ(a->i64, (std::vector<int64_t>{-1, int64_t{1} << 40}));

  onnx::TensorProto typed = proto("j", onnx::TensorProto::INT64, {1, 2});
  typed.add_int64_data(7);
  typed.add_int64_data(-8);
  Result<Tensor> b = read_tensor_proto_file(dir.write("b.pb", typed.SerializeAsString()));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(b->i64, (std::vector<int64_t>{7, -8}));
}

TEST(TensorFile, AScalarHasNoDimensionsAndOneElement) {
  TempDir dir;
  onnx::TensorProto p = proto("s", onnx::TensorProto::FLOAT, {});
  p.add_float_data(0.25f);
  Result<Tensor> t = read_tensor_proto_file(dir.write("s.pb", p.SerializeAsString()));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->shape.empty());
  EXPECT_EQ(t->num_elements(), 1);
  EXPECT_EQ(t->f32, (std::vector<float>{0.25f}));
}

TEST(TensorFile, OtherDtypesKeepShapeAndDtypeOnly) {
  TempDir dir;
  onnx::TensorProto p = proto("b", onnx::TensorProto::BOOL, {4});
  for (int v : {1, 0, 1, 1}) p.add_int32_data(v);
  Result<Tensor> t = read_tensor_proto_file(dir.write("b.pb", p.SerializeAsString()));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->dtype, DType::kBool);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{4}));
  EXPECT_TRUE(t->f32.empty());
  EXPECT_TRUE(t->i64.empty());
}

TEST(TensorFile, ErrorsNameTheFile) {
  TempDir dir;
  const std::string missing = dir.file("missing.pb");
  Result<Tensor> m = read_tensor_proto_file(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kIo);
  EXPECT_NE(m.status().message().find(missing), std::string::npos) << m.status().message();

  // Bytes that are not a protobuf message at all (an invalid wire type), and an empty file
  // (which parses as a message with no data type).
  for (const std::string& bytes : {std::string("\xff\xff\xff\xff garbage", 12), std::string()}) {
    const std::string path = dir.write("bad.pb", bytes);
    Result<Tensor> bad = read_tensor_proto_file(path);
    ASSERT_FALSE(bad.ok()) << bytes.size() << " bytes";
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find(path), std::string::npos) << bad.status().message();
  }

  // Data that does not fill its dims, in either field.
  onnx::TensorProto short_raw = proto("x", onnx::TensorProto::FLOAT, {2, 2});
  short_raw.set_raw_data(raw_bytes(std::vector<float>{1, 2, 3}));
  onnx::TensorProto short_typed = proto("x", onnx::TensorProto::INT64, {5});
  short_typed.add_int64_data(1);
  for (const onnx::TensorProto& p : {short_raw, short_typed}) {
    const std::string path = dir.write("short.pb", p.SerializeAsString());
    Result<Tensor> bad = read_tensor_proto_file(path);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find(path), std::string::npos) << bad.status().message();
  }
}

// One of ONNX's own files, when the shared data is there: test_abs's input is a 3x4x5 float32
// tensor, and its expected output is its absolute value.
TEST(TensorFile, ReadsAnOnnxBackendTestFile) {
  const std::filesystem::path dir =
      std::filesystem::path(KILN_SHARED_DIR) / "onnx-node-tests" / "test_abs" / "test_data_set_0";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " is absent (no ../shared)";
  Result<Tensor> x = read_tensor_proto_file((dir / "input_0.pb").string());
  Result<Tensor> y = read_tensor_proto_file((dir / "output_0.pb").string());
  ASSERT_TRUE(x.ok()) << x.status().message();
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(x->dtype, DType::kFloat32);
  EXPECT_EQ(x->shape, (std::vector<int64_t>{3, 4, 5}));
  ASSERT_EQ(x->f32.size(), 60u);
  ASSERT_EQ(y->f32.size(), 60u);
  for (size_t i = 0; i < 60; ++i) EXPECT_EQ(y->f32[i], std::abs(x->f32[i])) << i;
}

}  // namespace
}  // namespace kiln
