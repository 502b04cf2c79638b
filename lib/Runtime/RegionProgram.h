//===- RegionProgram.h - A linalg region compiled for row evaluation -*- C++ -*-===//
//
// A linalg region is compiled once into a flat list of instructions over
// registers. Each register holds a whole row ("lanes") of scalars, so one
// switch per instruction per row replaces per-element dispatch, and every
// instruction is a simple loop the compiler vectorizes. Registers are f32
// or i64 (i1 lives in i64 as 0/1); a register bound to an operand with unit
// stride points straight into the tensor (no copy). A failing cf.assert or
// an integer division by zero stops the run with an Error naming the
// kernel and op.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_REGIONPROGRAM_H
#define WSC_LIB_RUNTIME_REGIONPROGRAM_H

#include "wsc/Runtime/Schedule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wsc::rt {

struct Instr {
  ScalarOp op = ScalarOp::Constant;
  int dst = -1, a = -1, b = -1, c = -1;
  DType resultType = DType::F32; // drives f16/bf16 rounding and i1 masking
  DType sourceType = DType::F32; // for conversions out of i1
  CmpPredicate pred = CmpPredicate::False;
  float fimm = 0;
  int64_t iimm = 0;
  int dim = 0;
  int tensor = -1;          // tensor.extract: index into gathers()
  std::vector<int> indices; // tensor.extract: one index register per dim
  // tensor.extract from a batched tensor: its batch dim, indexed by
  // linalg.index of loop `dim` (global positions; the tensor holds the
  // local samples), or -1.
  int gatherBatchDim = -1;
  int check = -1;           // cf.assert: index into checks()
};

/// What a failing cf.assert reports: its message, the value it checked and
/// where that value was read (an element of a linalg operand, named after
/// the model input it is when it is one).
struct AssertCheck {
  std::string message;
  int valueReg = -1; // register of the checked value, or -1
  int operand = -1;  // the linalg operand it was read from, or -1
  AffineMap map;     // that operand's indexing map
  std::string input; // the model input that operand is, or empty
};

/// A kernel-body tensor a region gathers from (tensor.extract), bound per run.
struct GatherSource {
  const uint8_t *data = nullptr;
  Storage storage = Storage::F32;
  std::vector<int64_t> shape, strides;
};

class RegisterFile;

class RegionProgram {
public:
  /// Compiles the region of linalg body op `op`. Region operands defined
  /// outside the region (rank-0 body values) become captures.
  static RegionProgram compile(const BodyOp &op, const Schedule &schedule);

  int numRegs() const { return static_cast<int>(isFloat_.size()); }
  bool isFloatReg(int r) const { return isFloat_[r]; }

  /// Register bound to each linalg operand's block argument.
  const std::vector<int> &argRegs() const { return argRegs_; }
  /// Whether the region reads operand i's block argument at all.
  bool argUsed(int i) const { return argUsed_[i]; }
  const std::vector<int> &yieldRegs() const { return yieldRegs_; }
  /// (register, body value id) pairs for captured rank-0 values.
  const std::vector<std::pair<int, int>> &captures() const { return captures_; }
  /// Body value ids of the tensors tensor.extract reads, by Instr::tensor.
  const std::vector<int> &gathers() const { return gathers_; }
  /// Every body value the region reads from outside (for liveness).
  std::vector<int> capturedValues() const;
  /// True when rows need their true loop positions: linalg.index, or a
  /// cf.assert that reports the element it failed at.
  bool usesIndex() const { return usesIndex_; }
  const std::vector<AssertCheck> &checks() const { return checks_; }

  /// Instructions that need not run per row (constants); they fill `lanes`.
  const std::vector<Instr> &setup() const { return setup_; }
  const std::vector<Instr> &body() const { return body_; }

  /// Reduction form `yield combiner(x, out_arg)`: if present, `reduceInstr`
  /// indexes body() and `reduceInput` is x's register.
  bool hasReduction() const { return reduceInstr_ >= 0; }
  int reduceInstr() const { return reduceInstr_; }
  int reduceInput() const { return reduceInput_; }
  ScalarOp combiner() const { return combiner_; }

  /// `yield out + in0 * in1` (either operand order) over f32: a contraction.
  bool isMulAdd() const { return isMulAdd_; }

  /// `yield out + select(ids == index(dim), x, zero)` over f32 with integer
  /// ids (an embedding's backward, a one-hot product): only the points
  /// where loop `dim` equals ids add anything. Operand numbers of ids and
  /// x; `zeroReg` is a captured register whose value must be 0 when run
  /// (-1: a constant 0).
  struct OneHotSum {
    int idsOperand = -1, valueOperand = -1, dim = -1, zeroReg = -1;
  };
  const std::optional<OneHotSum> &oneHotSum() const { return oneHotSum_; }
  int numInstrs() const { return static_cast<int>(body_.size()); }

  /// Runs body() over `n` lanes, skipping instruction `skip` (or -1).
  /// `loopIndex` holds the current index of every loop; loop `innerDim`
  /// advances by one per lane (used by linalg.index).
  void run(RegisterFile &rf, int n, const int64_t *loopIndex, int innerDim, int skip) const;
  /// Runs setup() over `n` lanes.
  void runSetup(RegisterFile &rf, int n) const;

private:
  std::vector<bool> isFloat_;
  std::vector<int> argRegs_;
  std::vector<bool> argUsed_;
  std::vector<int> yieldRegs_;
  std::vector<std::pair<int, int>> captures_;
  std::vector<int> gathers_;
  std::vector<Instr> setup_, body_;
  std::vector<AssertCheck> checks_;
  std::string where_; // "<schedule>: kernel '<name>' (<path>) <op> (<path>)"
  bool usesIndex_ = false;
  [[noreturn]] void failCheck(const Instr &in, const RegisterFile &rf, int lane,
                              const int64_t *loopIndex, int innerDim) const;
  [[noreturn]] void failDivision(const Instr &in) const;
  int reduceInstr_ = -1, reduceInput_ = -1;
  ScalarOp combiner_ = ScalarOp::AddF;
  bool isMulAdd_ = false;
  std::optional<OneHotSum> oneHotSum_;
  void matchOneHotSum(const BodyOp &op, const Schedule &schedule);
};

/// Row storage for one evaluation of a RegionProgram.
class RegisterFile {
public:
  RegisterFile(const RegionProgram &program, int lanes);
  int lanes() const { return lanes_; }
  /// Current value pointers (may point into a tensor).
  const float *f(int r) const { return fptr_[r]; }
  const int64_t *i(int r) const { return iptr_[r]; }
  /// The register's own buffer (and make it current).
  float *ownF(int r) { return fptr_[r] = fown_[r]; }
  int64_t *ownI(int r) { return iptr_[r] = iown_[r]; }
  /// Make `p` register r's own buffer: the instructions that write r
  /// write there (an output row, so no copy out is needed).
  void redirectF(int r, float *p) { fown_[r] = p; }
  void redirectI(int r, int64_t *p) { iown_[r] = p; }
  /// Point register r at external data (read-only use).
  void bindF(int r, const float *p) { fptr_[r] = const_cast<float *>(p); }
  void bindI(int r, const int64_t *p) { iptr_[r] = const_cast<int64_t *>(p); }
  /// The tensors of RegionProgram::gathers(), in order.
  std::vector<GatherSource> gathers;
  /// Per loop, what linalg.index adds to the local position (the first
  /// local sample's global rows), or null: a gather from a batched tensor
  /// takes it off again.
  const int64_t *indexBase = nullptr;

private:
  int lanes_;
  std::vector<float> fstore_;
  std::vector<int64_t> istore_;
  std::vector<float *> fown_, fptr_;
  std::vector<int64_t *> iown_, iptr_;
};

/// Applies a reduction combiner to two scalars (MLIR semantics).
float combineF(ScalarOp op, float a, float b);
int64_t combineI(ScalarOp op, int64_t a, int64_t b);
/// Reduces x[0..n) with `op`, starting from `acc`.
float reduceF(ScalarOp op, float acc, const float *x, int n);
int64_t reduceI(ScalarOp op, int64_t acc, const int64_t *x, int n);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_REGIONPROGRAM_H
